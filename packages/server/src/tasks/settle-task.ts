import { inTransaction, type PoolClient, type Queryable } from '@imagegen/db';
import { EngineInputError } from '@imagegen/engines';
import { downloadUrl } from '../storage/blob-keys.ts';
import { insertFailureUsage } from '../usage/sql/insertFailureUsage.ts';
import { failureFacts, successFacts, type UsageFacts } from '../usage/usage-facts.ts';
import { CANCELLED, DeadlinePassedError, LEASE_LOST, SHUTDOWN } from './attempt-lease.ts';
import { FinalError } from './final-error.ts';
import { settleModel } from './models/sql/settleModel.ts';
import type { TaskOutcome } from './run-task.ts';
import { completeTask } from './sql/completeTask.ts';
import { failTask } from './sql/failTask.ts';
import { getCancelledAt } from './sql/getCancelledAt.ts';
import { releaseTask } from './sql/releaseTask.ts';
import { toTaskRecord } from './sql/task-row.ts';
import { taskWebhookBody } from './status-body.ts';
import type { TaskRecord, TaskResult } from './types.ts';
import { webhookFor } from './webhook-events.ts';
import { taskFields, taskLabels, type WorkerContext } from './worker-context.ts';

/** The completing write found the task claimed by another attempt: roll back, change nothing. */
class LeaseLostError extends Error {}

/**
 * Finishes a task that ran: its model row (load_model, train_model) becomes ready with the
 * engine's marks, the task succeeds, its images and usage are recorded and its webhook is queued,
 * all or nothing. A task with neither a model row nor a webhook settles in one statement; the others in
 * one transaction. If the task was cancelled or another worker took it meanwhile, nothing is
 * written and the outputs this attempt stored are removed; the pre-allocated links of
 * queued_image_urls stay only for the other worker, which will fill them: a cancelled task's
 * outputs are never served.
 */
export async function settleSuccess(
  ctx: WorkerContext,
  task: TaskRecord,
  leaseOwner: string,
  outcome: TaskOutcome,
): Promise<void> {
  const usage = successFacts(task.input, outcome.result.meta, outcome.totals ?? { images: 0, pixels: 0 });
  const complete = async (db: Queryable, result: TaskResult): Promise<TaskRecord> => {
    const images = task.kind === 'generation' ? outcome.outputKeys : [];
    const row = await completeTask(db, {
      id: task.id,
      leaseOwner,
      result,
      outputKeys: outcome.outputKeys,
      images: images.map((key) => ({ blobKey: key, downloadUrl: downloadUrl(ctx.publicUrl, key) })),
      imageJson: { endpoint: task.endpoint, input: task.input, seed: result.meta?.seed },
      modelId: typeof task.input.model_id === 'string' ? task.input.model_id : null,
      usage,
    });
    if (!row) throw new LeaseLostError();
    return toTaskRecord(row);
  };
  const modelTask = task.kind === 'load_model' || task.kind === 'training';
  const settle =
    !modelTask && !webhookFor(ctx, task, 'completed')
      ? complete(ctx.pool, outcome.result)
      : inTransaction(ctx.pool, async (client) => {
          let { result } = outcome;
          if (modelTask) {
            const tags = outcome.model?.tags?.filter((tag) => tag !== '') ?? [];
            const note = outcome.model?.descriptionNote ?? '';
            const { sha256, bytes } = outcome.model ?? {};
            // A training's pictures are its model's sample images (load_model's come with the request).
            const samples = task.kind === 'training' ? outcome.outputKeys : [];
            const model = await settleModel(client, {
              ownerId: task.ownerId,
              taskId: task.id,
              status: 'ready',
              ...(tags.length > 0 ? { addTags: tags } : {}),
              ...(note ? { descriptionNote: note } : {}),
              ...(sha256 !== undefined && bytes !== undefined ? { file: { sha256, bytes } } : {}),
              ...(samples.length > 0
                ? { sampleImages: samples.map((key) => downloadUrl(ctx.publicUrl, key)) }
                : {}),
            });
            // sync_model names an existing model in its input; load and train registered a row.
            const named = typeof task.input.model_id === 'string' ? task.input.model_id : null;
            result = { ...result, model_id: model?.model_id ?? named };
          }
          const done = await complete(client, result);
          await enqueueWebhook(ctx, client, done);
          return done;
        });
  const completed = await settle.then(
    (done) => done,
    (error) => {
      if (error instanceof LeaseLostError) return null;
      throw error;
    },
  );
  if (completed) {
    ctx.metrics?.tasksSucceeded.inc(taskLabels(ctx, task));
    countUsage(ctx, task, completed, usage);
    ctx.log('task succeeded', taskFields(task, 'info'));
  } else {
    const cancelled = (await getCancelledAt(ctx.pool, task.id)) !== null;
    ctx.log(
      `task ${task.id}: finished after ${cancelled ? 'it was cancelled' : 'its lease was lost; another worker owns it'}`,
      taskFields(task),
    );
    if (cancelled || task.outputKeys.length === 0)
      await Promise.all(outcome.outputKeys.map((key) => ctx.store.delete(key)));
  }
}

/**
 * Settles an attempt that threw. Aborted because the lease was lost: another worker owns the task,
 * leave it. Aborted by a cancel: the cancel already settled the task (and queued its webhook).
 * Aborted by shutdown: release it to the queue without counting the attempt. Otherwise
 * the attempt fails: an input error, a FinalError or the task's deadline at once, anything else
 * (an attempt past its time limit included) is retried with backoff until the task's attempts
 * run out.
 */
export async function settleError(
  ctx: WorkerContext,
  task: TaskRecord,
  leaseOwner: string,
  signal: AbortSignal,
  error: unknown,
): Promise<void> {
  const reason = signal.aborted ? (signal.reason as Error | undefined)?.message : undefined;
  if (reason === LEASE_LOST || reason === CANCELLED) {
    ctx.log(
      `task ${task.id}: ${reason === CANCELLED ? 'cancelled by its caller' : 'lease lost'}, abandoned`,
      taskFields(task),
    );
    return;
  }
  if (reason === SHUTDOWN) {
    await releaseTask(ctx.pool, { id: task.id, leaseOwner });
    ctx.log(`task ${task.id}: released for another worker (shutdown)`, taskFields(task));
    return;
  }
  const deadline = signal.aborted && signal.reason instanceof DeadlinePassedError ? signal.reason : null;
  const final = deadline !== null || error instanceof FinalError || error instanceof EngineInputError;
  // Timed out: the engine saw the abort; the reason says why it was aborted.
  const cause = reason ?? describeError(error);
  const text = deadline ? deadline.message : final ? (error as Error).message : `engine error: ${cause}`;
  const backoffMs = ctx.retryBaseMs * 2 ** Math.max(0, task.attempts - 1);
  const labels = taskLabels(ctx, task);
  const usage = failureFacts(task.input, labels.engine === 'none' ? null : labels.engine);
  const failed = await inTransaction(ctx.pool, async (client) => {
    const row = await failTask(client, { id: task.id, leaseOwner, error: text, final, backoffMs });
    if (row?.state !== 'failed') return null;
    const record = toTaskRecord(row);
    await settleFailure(ctx, client, record, usage);
    return record;
  });
  if (failed) {
    ctx.metrics?.tasksFailed.inc(labels);
    countUsage(ctx, task, failed, usage);
  }
  ctx.log(`task ${task.id}: attempt ${task.attempts} failed: ${text}`, taskFields(task));
}

/** What settling a failure needs: where links point, and the webhook outbox (absent: no webhooks). */
export type FailureContext = Pick<WorkerContext, 'publicUrl' | 'enqueueWebhook'>;

/**
 * Inside the transaction that failed the task for good (an attempt, an expired lease, a cancel):
 * its model row fails, its usage is recorded (`usage`: what is known of the engine that ran it;
 * default nothing), its webhook is queued.
 */
export async function settleFailure(
  ctx: FailureContext,
  client: PoolClient,
  task: TaskRecord,
  usage: UsageFacts = failureFacts(task.input, null),
): Promise<void> {
  if (task.kind === 'load_model' || task.kind === 'training') {
    await settleModel(client, { ownerId: task.ownerId, taskId: task.id, status: 'failed' });
  }
  await insertFailureUsage(client, task.id, usage);
  await enqueueWebhook(ctx, client, task);
}

/**
 * The operators' totals of what finished here, by pipeline and engine (never by owner: the
 * owners read theirs at /usage/v1).
 */
function countUsage(ctx: WorkerContext, task: TaskRecord, settled: TaskRecord, usage: UsageFacts): void {
  const metrics = ctx.metrics;
  if (!metrics) return;
  const labels = taskLabels(ctx, task);
  metrics.taskImages.inc(labels, usage.images);
  metrics.taskPixels.inc(labels, usage.pixels);
  const ran =
    settled.startedAt && settled.finishedAt ? settled.finishedAt.getTime() - settled.startedAt.getTime() : 0;
  metrics.taskRunSeconds.inc(labels, Math.max(0, ran) / 1000);
}

async function enqueueWebhook(ctx: FailureContext, client: PoolClient, task: TaskRecord): Promise<void> {
  const url = webhookFor(ctx, task, 'completed');
  if (!url || !ctx.enqueueWebhook) return;
  await ctx.enqueueWebhook(client, {
    ownerId: task.ownerId,
    taskId: task.id,
    url,
    body: taskWebhookBody(task, ctx.publicUrl),
  });
}

/**
 * An error's message for the task's owner. A system call's failure is named by the call and its
 * code alone: Node's own text carries the worker's paths (`ENOSPC: no space left on device, open
 * '/data/files/...'`).
 */
function describeError(error: unknown): string {
  const { code, syscall, message } = (error ?? {}) as NodeJS.ErrnoException;
  if (typeof code === 'string' && typeof syscall === 'string')
    return `the worker's ${syscall} failed (${code})`;
  return message ?? String(error);
}
