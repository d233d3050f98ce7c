/**
 * What the insights operations need of a database: one query method taking a named statement, as
 * a `pg` Pool or client has. Structural, so this package does not depend on the API's pool.
 */
export interface Queryable {
  query<Row extends object = Record<string, unknown>>(statement: {
    name: string;
    text: string;
    values: unknown[];
  }): Promise<{ rows: Row[]; rowCount: number | null }>;
}
