import { type Queryable, toStoredJson } from '@imagegen/db';

export interface SearchEventRow {
  event_type: 'view' | 'click' | 'conversion';
  event_name: string;
  index_name: string;
  user_token: string;
  authenticated_user_token: string | null;
  query_id: string | null;
  object_ids: string[];
  positions: number[] | null;
  /** Milliseconds since the epoch. */
  timestamp: number;
}

/** Stores a batch of insights events in one statement, any string as it came. */
export async function insertSearchEvents(db: Queryable, events: SearchEventRow[]): Promise<number> {
  const result = await db.query({
    name: 'insertSearchEvents',
    text: `INSERT INTO search_events
             (event_type, event_name, index_name, user_token, authenticated_user_token, query_id,
              object_ids, positions, event_at)
           SELECT e.event_type, e.event_name, e.index_name, e.user_token, e.authenticated_user_token,
                  e.query_id,
                  ARRAY(SELECT jsonb_array_elements_text(e.object_ids)),
                  CASE WHEN e.positions IS NULL THEN NULL
                       ELSE ARRAY(SELECT jsonb_array_elements_text(e.positions)::integer) END,
                  to_timestamp(e.timestamp / 1000.0)
           FROM jsonb_to_recordset($1::jsonb) AS e(
             event_type text, event_name text, index_name text, user_token text,
             authenticated_user_token text, query_id text, object_ids jsonb, positions jsonb,
             timestamp double precision)`,
    values: [toStoredJson(events)],
  });
  return result.rowCount ?? 0;
}
