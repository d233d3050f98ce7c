/**
 * The task service: submit, read and run tasks. The tasks table is the queue (see
 * ../db/migrations/0002_tasks.sql); every statement is a named operation under ./sql.
 *
 *   submitTask(pool, {ownerId, endpoint, kind, input, publicUrl})  → {id, seed?, outputUrls?}
 *     (durable on return; concurrent submits share one INSERT; RoutingError for server_id refusals)
 *   getTaskForOwner(pool, ownerId, id)  → TaskRecord | null      (another owner's id: null)
 *   new TaskStatusReader(pool).read(ownerId, id) → the fields a status poll needs (batched reads)
 *   listBatch(pool, ownerId, batchId)   → TaskRecord[]
 *   taskStatusBody(task, publicUrl)     → the status response (and webhook body) for the task
 *   startWorker({pool, engines, fetcher, store, publicUrl, signal, ...}) → {id, stopped}
 */
export { getTaskForOwner, listBatch } from './read.ts';
export { type Route, RoutingError, resolveRoute } from './routing.ts';
export { type TrainingStatus, taskStatusBody, trainingStatus } from './status-body.ts';
export { drawSeed, submitTask } from './submit.ts';
export { TASKS_CHANNEL } from './task-notifications.ts';
export { TaskStatusReader } from './task-status-reader.ts';
export type {
  BlobStore,
  EnqueueWebhook,
  ImageFetcher,
  SubmitTaskParams,
  SubmittedTask,
  TaskKind,
  TaskRecord,
  TaskResult,
  TaskState,
  Worker,
  WorkerOptions,
} from './types.ts';
export { startWorker } from './worker.ts';
