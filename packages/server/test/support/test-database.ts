import { createTestDatabase as createDatabase, type TestDatabase } from '@imagegen/db/testing';
import { PRODUCT_MIGRATIONS } from '../../src/db/migrate.ts';

export type { TestDatabase };

/** A suite's own database with the product's tables (or none, with `migrate: false`). */
export function createTestDatabase(options: { migrate?: boolean } = {}): Promise<TestDatabase> {
  return createDatabase({ migrations: options.migrate === false ? [] : PRODUCT_MIGRATIONS });
}
