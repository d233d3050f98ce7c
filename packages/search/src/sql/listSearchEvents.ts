import { fromStored, type Queryable } from '@imagegen/db';

export interface StoredSearchEvent {
  event_type: string;
  event_name: string;
  index_name: string;
  user_token: string;
  query_id: string | null;
  object_ids: string[];
  positions: number[] | null;
  event_at: Date;
}

/** The most recent events first (for operators and tests). */
export async function listSearchEvents(db: Queryable, limit: number): Promise<StoredSearchEvent[]> {
  const result = await db.query<StoredSearchEvent>({
    name: 'listSearchEvents',
    text: `SELECT event_type, event_name, index_name, user_token, query_id, object_ids, positions, event_at
           FROM search_events ORDER BY id DESC LIMIT $1`,
    values: [limit],
  });
  return fromStored(result.rows);
}
