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
  /** The change counter (0008_task_control.sql): a status stream's event id. */
  version: number;
  /** Where it may run ('shared', 'owner:<uuid>', 'server:<id>'): its place in line depends on it. */
  route: string;
  /**
   * created_at as epoch milliseconds (a plain number costs less to read than a date), exactly as
   * getQueuedRuns reads it; started_at likewise, while the task runs.
   */
  created_ms: number;
  started_ms: number | null;
}

/**
 * Many tasks' status columns in one round trip, for batched status polls. Owner scoping is the
 * caller's job (task-status-reader.ts compares owner_id per request), so one statement serves
 * many owners. Only the columns a status answer reads (with what a pending task's estimates and a
 * status stream need): the request itself (input) would cost the database and this process a
 * conversion per row for nothing, and the timestamps come as numbers, not dates.
 */
export async function getTaskStatusesByIds(db: Queryable, ids: readonly string[]): Promise<TaskStatusRow[]> {
  const result = await db.query<TaskStatusRow>({
    name: 'getTaskStatusesByIds',
    text: `SELECT id, owner_id, endpoint, kind, state, progress, result, error, output_keys,
             input ? 'base64' AS asks_base64, version, route,
             date_part('epoch', created_at) * 1000 AS created_ms,
             CASE WHEN state = 'running' THEN date_part('epoch', started_at) * 1000 END AS started_ms
           FROM tasks WHERE id = ANY($1::uuid[])`,
    values: [ids],
  });
  return fromStored(result.rows);
}
