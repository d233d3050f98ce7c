import { fromStored, type Queryable } from '@imagegen/db';
import type { TaskKind, TaskResult, TaskState } from '../types.ts';

/** What a status answer needs of a task (tasks/status-body.ts), and no more. */
export interface TaskStatusRow {
  id: string;
  owner_id: string;
  endpoint: string;
  kind: TaskKind;
  state: TaskState;
  progress: number | null;
  result: TaskResult | null;
  error: string | null;
  output_keys: string[];
  /** Whether the request asked for `base64`: the only thing the status body reads of the input. */
  asks_base64: boolean;
}

/**
 * Many tasks' status columns in one round trip, for batched status polls. Owner scoping is the
 * caller's job (task-status-reader.ts compares owner_id per request), so one statement serves
 * many owners. Only the columns a status answer reads: the request itself (input) and the
 * timestamps would cost the database and this process a conversion per row for nothing.
 */
export async function getTaskStatusesByIds(db: Queryable, ids: readonly string[]): Promise<TaskStatusRow[]> {
  const result = await db.query<TaskStatusRow>({
    name: 'getTaskStatusesByIds',
    text: `SELECT id, owner_id, endpoint, kind, state, progress, result, error, output_keys,
             input ? 'base64' AS asks_base64
           FROM tasks WHERE id = ANY($1::uuid[])`,
    values: [ids],
  });
  return fromStored(result.rows);
}
