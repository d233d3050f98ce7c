/** Test support other parts of the repository use (browser tests): a suite's own product database. */
export { createTestDatabase, type TestDatabase } from './test-database.ts';
