import { createTestDatabase as createDatabase, type TestDatabase } from '@imagegen/db/testing';
import { SEARCH_MIGRATIONS } from '../../src/migrations.ts';

export type { TestDatabase };

/** A suite's own database with the insights table (or none, with `migrate: false`). */
export function createTestDatabase(options: { migrate?: boolean } = {}): Promise<TestDatabase> {
  return createDatabase({ migrations: options.migrate === false ? [] : [SEARCH_MIGRATIONS] });
}
