import { fromStored, type Queryable } from '@imagegen/db';
import { TASKS_DOT_COLUMNS, type TaskRow } from './task-row.ts';

/**
 * Queued tasks whose deadline (Cancel-After) passed fail without running, with `error` (a
 * `format` template: `%s` is the duration the caller sent). Running ones are left to their worker,
 * which aborts them at the deadline. Returns the rows it failed.
 */
export async function expireDeadlines(db: Queryable, params: { error: string }): Promise<TaskRow[]> {
  const result = await db.query<TaskRow>({
    name: 'expireDeadlines',
    text: `WITH expired AS (
             SELECT id FROM tasks WHERE state = 'queued' AND deadline_at IS NOT NULL AND deadline_at <= now()
             ORDER BY deadline_at LIMIT 100
             FOR UPDATE SKIP LOCKED
           )
           UPDATE tasks SET state = 'failed', finished_at = now(), error = format($1, tasks.cancel_after),
             lease_owner = NULL, lease_expires_at = NULL
           FROM expired WHERE tasks.id = expired.id
           RETURNING ${TASKS_DOT_COLUMNS}`,
    values: [params.error],
  });
  return fromStored(result.rows);
}
