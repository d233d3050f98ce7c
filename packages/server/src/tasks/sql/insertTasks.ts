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
  /** The stored files its input links to (`fileKeysLinkedFrom`): kept while it is queued or running. */
  input_keys: string[];
  /** The submission's request id (absent: none). */
  request_id?: string | null;
  /** Cancel-After as the caller wrote it, and in milliseconds (absent: no deadline). */
  cancel_after?: string | null;
  cancel_after_ms?: number | null;
}

/**
 * Inserts many tasks in one statement (one round trip, one commit): the group commit of
 * concurrent submissions. No trigger notifies here (0006_submit_without_notify.sql); submitters
 * wake the workers after the commit. Ids are made by the caller, so no RETURNING is needed.
 *
 * The uploads and stored images the tasks' inputs name are locked (FOR KEY SHARE) until the
 * tasks commit. The retention sweeper locks a file's row before it decides, in a later statement,
 * that no live task names it; so either it holds the row first and this waits until the file is
 * gone (the task then fails at its fetch, as with any missing file), or this holds it first and
 * the sweeper skips it, and sees the committed task next time. A submitted task's files are
 * never deleted between its submission and its run. (The counts join each row only to make
 * PostgreSQL run the locking selects.)
 */
/** The INSERT itself; the locking form puts the two held_* selects in front of it. */
const INSERT = `INSERT INTO tasks (id, owner_id, endpoint, kind, input, target_server, target_pool, batch_id,
             max_attempts, output_keys, input_keys, request_id, cancel_after, deadline_at)
           SELECT id, owner_id, endpoint, kind, input, target_server, target_pool, batch_id, max_attempts,
             output_keys, input_keys, request_id, cancel_after,
             now() + make_interval(secs => cancel_after_ms / 1000.0)
           FROM jsonb_to_recordset($1::jsonb) AS r(id uuid, owner_id uuid, endpoint text, kind text,
             input jsonb, target_server text, target_pool text, batch_id text, max_attempts integer,
             output_keys text[], input_keys text[], request_id text, cancel_after text,
             cancel_after_ms bigint)`;

export async function insertTasks(db: Queryable, rows: readonly NewTaskRow[]): Promise<void> {
  const inputKeys = [...new Set(rows.flatMap((row) => row.input_keys))];
  // Most batches link to no stored file: they insert without the locking selects.
  if (inputKeys.length === 0) {
    await db.query({ name: 'insertTasks', text: INSERT, values: [toStoredJson(rows)] });
    return;
  }
  await db.query({
    name: 'insertTasksHoldingFiles',
    text: `WITH held_uploads AS (
             SELECT count(*) AS n FROM (SELECT 1 FROM uploads WHERE blob_key = ANY($2::text[]) FOR KEY SHARE) AS u),
           held_images AS (
             SELECT count(*) AS n FROM (SELECT 1 FROM images WHERE blob_key = ANY($2::text[]) FOR KEY SHARE) AS i)
           ${INSERT}, held_uploads, held_images`,
    values: [toStoredJson(rows), inputKeys],
  });
}
