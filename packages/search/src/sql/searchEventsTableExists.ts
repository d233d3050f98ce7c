import type { Queryable } from '../queryable.ts';

/** Whether the database has the search_events table (the product's migrations create it). */
export async function searchEventsTableExists(db: Queryable): Promise<boolean> {
  const result = await db.query<{ present: boolean }>({
    name: 'searchEventsTableExists',
    text: `SELECT to_regclass('search_events') IS NOT NULL AS present`,
    values: [],
  });
  return result.rows[0]?.present === true;
}
