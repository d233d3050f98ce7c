import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Pool, runMigrations } from '@imagegen/db';
import { SEARCH_MIGRATIONS } from '@imagegen/search';

/** The API's own tables: accounts, tasks, webhooks, analytics (numbered .sql files, never edited). */
const API_MIGRATIONS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

/**
 * Every table of the product, in one numbered order: the API's, and the docs search's insights
 * (which the search package owns, so it can run alone). Every process that opens the product's
 * database applies them; the runner's lock lets several start at once.
 */
export const PRODUCT_MIGRATIONS: readonly string[] = [API_MIGRATIONS, SEARCH_MIGRATIONS];

export function migrate(pool: Pool): Promise<string[]> {
  return runMigrations(pool, PRODUCT_MIGRATIONS);
}
