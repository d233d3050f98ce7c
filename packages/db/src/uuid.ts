/**
 * Rows are keyed by PostgreSQL uuids. An id from a URL or a command line that is not one cannot
 * name a row, and must not reach SQL, where the cast would fail the statement.
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}
