// Insights live in the product's database: a suite's database carries the product's migrations,
// which the API package owns, so this package's tests use the API's test database.
export { createTestDatabase, type TestDatabase } from '../../../server/test/support/test-database.ts';
