/**
 * The task service: submit, read and run tasks. The tasks table is the queue (see
 * ../db/migrations/0002_tasks.sql); every statement is a named operation under ./sql. The models
 * that load_model, train_model and sync_model tasks register live in ./models, which holds every
 * statement on the `models` and `model_syncs` tables.
 *
 *   submitTask(pool, {ownerId, endpoint, kind, input, publicUrl})  → {id, seed?, outputUrls?}
 *     (durable on return; concurrent submits share one INSERT; RoutingError for server_id refusals)
 *   submitModelTask(pool, {...})        → the same, for a model task, with its models row in one
 *     transaction (ModelNotFoundError for a sync of a model that is not the caller's)
 *   getModel(pool, ownerId, modelId), listModels(pool, ownerId) → the owner's model rows
 *   getTaskForOwner(pool, ownerId, id)  → TaskRecord | null      (another owner's id: null)
 *   new TaskStatusReader(pool).read(ownerId, id) → the fields a status poll needs (batched reads)
 *   listBatch(pool, ownerId, batchId)   → TaskRecord[]
 *   taskStatusBody(task, publicUrl, estimates?) → the status response for the task
 *   taskWebhookBody(task, publicUrl) → its webhook body: that status, then the task's id and path
 *   new QueueEstimates(pool).of(task)   → queue_position and eta_seconds of a pending task
 *   cancelTask(pool, {ownerId, id, store, ...}) → cancelled | ended | missing
 *   new TaskWatcher(pool, reader).watch(ownerId, id, onChange) / .waitForEnd(...) → live status
 *   submitIdempotent(pool, params, key) → {submitted, replayed} (IdempotencyKeyReusedError)
 *   listTasks(pool, ownerId, query)     → a page of the owner's tasks (InvalidCursorError)
 *   startWorker({pool, engines, fetcher, store, publicUrl, signal, ...}) → {id, stopped}
 *   taskLimitsFromEnv(env)            → the worker's attempt timeouts and per-plan concurrency
 *   promptEnhancerFromEnv(env)        → the language model that rewrites `enhance_prompt` prompts
 *   deleteFinishedTasks(db, cutoff, limit), deleteExpiredIdempotencyKeys(db, cutoff, limit) → how
 *     many went (the retention sweeper's batches)
 */

export { type CancelOutcome, cancelTask } from './cancel-task.ts';
export { IdempotencyKeyReusedError, submitIdempotent } from './idempotent-submit.ts';
export { InvalidCursorError, listTasks, type TaskListQuery } from './list-tasks.ts';
export { deleteOwnerModel, type ModelFileRemover, ModelInUseError } from './models/delete-model.ts';
export { getModel } from './models/sql/getModel.ts';
export { listModels } from './models/sql/listModels.ts';
export type { ModelRow } from './models/sql/model-row.ts';
export { ModelNotFoundError, submitModelTask } from './models/submit-model-task.ts';
export { followPreviews } from './previews/follow-previews.ts';
export type { TaskPreview } from './previews/sql/getTaskPreview.ts';
export {
  createPromptEnhancer,
  ENHANCER_INSTRUCTION,
  type PromptEnhancer,
  promptEnhancerFromEnv,
} from './prompt-enhancer.ts';
export { QueueEstimates } from './queue-estimates.ts';
export { getTaskForOwner, listBatch } from './read.ts';
export { SubmitRefusedError } from './refusal.ts';
export { type Route, RoutingError, resolveRoute } from './routing.ts';
export { deleteExpiredIdempotencyKeys } from './sql/deleteExpiredIdempotencyKeys.ts';
export { deleteFinishedTasks } from './sql/deleteFinishedTasks.ts';
export { type AttemptError, type FailedTask, listFailedTasks } from './sql/listFailedTasks.ts';
export { requeueFailedTasks } from './sql/requeueFailedTasks.ts';
export {
  type PendingEstimates,
  type TrainingStatus,
  taskStatusBody,
  taskWebhookBody,
  trainingStatus,
} from './status-body.ts';
export { drawSeed, submitTask } from './submit.ts';
export { TASK_EVENTS_CHANNEL } from './task-events.ts';
export { type TaskLimits, taskLimitsFromEnv } from './task-limits.ts';
export { TASKS_CHANNEL } from './task-notifications.ts';
export { type TaskStatus, TaskStatusReader } from './task-status-reader.ts';
export { hasEnded, TaskWatcher, type Watching } from './task-watcher.ts';
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
