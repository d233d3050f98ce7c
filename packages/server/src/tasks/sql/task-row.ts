import type { TaskKind, TaskRecord, TaskResult, TaskState } from '../types.ts';

/** The columns every task read returns, in the shape `toTaskRecord` maps. */
export const TASK_COLUMNS = `id, owner_id, endpoint, kind, input, state, target_server, target_pool, batch_id,
  attempts, max_attempts, progress, progress_message, result, error, output_keys, created_at, started_at,
  finished_at, request_id, deadline_at, cancel_after`;

export interface TaskRow {
  id: string;
  owner_id: string;
  endpoint: string;
  kind: TaskKind;
  input: Record<string, unknown>;
  state: TaskState;
  target_server: string | null;
  target_pool: string;
  batch_id: string | null;
  attempts: number;
  max_attempts: number;
  progress: number | null;
  progress_message: string | null;
  result: TaskResult | null;
  error: string | null;
  output_keys: string[];
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  request_id: string | null;
  deadline_at: Date | null;
  cancel_after: string | null;
}

export function toTaskRecord(row: TaskRow): TaskRecord {
  return {
    id: row.id,
    ownerId: row.owner_id,
    endpoint: row.endpoint,
    kind: row.kind,
    input: row.input,
    state: row.state,
    targetServer: row.target_server,
    targetPool: row.target_pool,
    batchId: row.batch_id,
    attempts: row.attempts,
    maxAttempts: row.max_attempts,
    progress: row.progress,
    progressMessage: row.progress_message,
    result: row.result,
    error: row.error,
    outputKeys: row.output_keys,
    createdAt: row.created_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    requestId: row.request_id,
    deadlineAt: row.deadline_at,
    cancelAfter: row.cancel_after,
  };
}

/** TASK_COLUMNS qualified by a table name, for statements that join another relation. */
export const TASKS_DOT_COLUMNS = TASK_COLUMNS.split(',')
  .map((column) => `tasks.${column.trim()}`)
  .join(', ');
