import type { Queryable } from '../../db/pool.ts';
import { TASK_COLUMNS, type TaskRow } from '../../tasks/sql/task-row.ts';

/**
 * Many tasks in one round trip, for batched status polls. Owner scoping is the caller's job
 * (task-status-reader.ts compares owner_id per request), so one statement serves many owners.
 */
export async function getTasksByIds(db: Queryable, ids: readonly string[]): Promise<TaskRow[]> {
  const result = await db.query<TaskRow>({
    name: 'getTasksByIds',
    text: `SELECT ${TASK_COLUMNS} FROM tasks WHERE id = ANY($1::uuid[])`,
    values: [ids],
  });
  return result.rows;
}
