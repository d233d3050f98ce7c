import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The folder of this package's numbered migrations (the insights table). The numbers continue the
 * product's one sequence: the product's migration run applies this folder with the API's.
 */
export const SEARCH_MIGRATIONS = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  'migrations',
);
