import { type Queryable, toStoredJson } from '@imagegen/db';

export interface NewTaskRow {
  id: string;
  owner_id: string;
  endpoint: string;
  kind: string;
  input: Record<string, unknown>;
  target_server: string | null;
  target_pool: string;
  batch_id: string | null;
  max_attempts: number;
  output_keys: string[];
  /** The submission's request id (absent: none). */
  request_id?: string | null;
}

/**
 * Inserts many tasks in one statement (one round trip, one commit): the group commit of
 * concurrent submissions. No trigger notifies here (0006_submit_without_notify.sql); submitters
 * wake the workers after the commit. Ids are made by the caller, so no RETURNING is needed.
 */
export async function insertTasks(db: Queryable, rows: readonly NewTaskRow[]): Promise<void> {
  await db.query({
    name: 'insertTasks',
    text: `INSERT INTO tasks (id, owner_id, endpoint, kind, input, target_server, target_pool, batch_id,
             max_attempts, output_keys, request_id)
           SELECT id, owner_id, endpoint, kind, input, target_server, target_pool, batch_id, max_attempts,
             output_keys, request_id
           FROM jsonb_to_recordset($1::jsonb) AS r(id uuid, owner_id uuid, endpoint text, kind text,
             input jsonb, target_server text, target_pool text, batch_id text, max_attempts integer,
             output_keys text[], request_id text)`,
    values: [toStoredJson(rows)],
  });
}
