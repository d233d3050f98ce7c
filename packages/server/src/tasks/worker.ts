import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { endpointByPath } from '@imagegen/contract';
import { EngineInputError, type EngineJob, type EngineResult, type InputImage } from '@imagegen/engines';
import { inTransaction, type PoolClient } from '../db/pool.ts';
import { allocateOutputKeys, downloadUrl, extensionFor } from '../storage/blob-keys.ts';
import { ownerPool, SHARED_POOL } from './routing.ts';
import { announceServer } from './sql/announceServer.ts';
import { claimTask } from './sql/claimTask.ts';
import { completeTask } from './sql/completeTask.ts';
import { failTask } from './sql/failTask.ts';
import { heartbeatTask } from './sql/heartbeatTask.ts';
import { insertImages } from './sql/insertImages.ts';
import { reclaimExpired } from './sql/reclaimExpired.ts';
import { releaseTask } from './sql/releaseTask.ts';
import { setServerStatus } from './sql/setServerStatus.ts';
import { settleModel } from './sql/settleModel.ts';
import { type TaskRow, toTaskRecord } from './sql/task-row.ts';
import { taskStatusBody } from './status-body.ts';
import { drawSeed } from './submit.ts';
import { listenForTasks } from './task-notifications.ts';
import type { TaskRecord, TaskResult, Worker, WorkerOptions } from './types.ts';

/** An error the task's owner reads as is, and which no retry can cure. */
class FinalError extends Error {}

/** The completing write found the task claimed by another attempt: roll back, change nothing. */
class LeaseLostError extends Error {}

/** Why a running attempt was aborted: the worker no longer owns it, or is shutting down. */
const LEASE_LOST = 'lease lost';
const SHUTDOWN = 'worker shutting down';

/**
 * Starts a worker: claims tasks (fairly, by routing), runs each on its engine with a renewed
 * lease, stores the outputs and finishes the task with its webhook in one transaction. Aborting
 * `signal` stops claiming; running tasks get `drainMs` to finish, then are released to the queue.
 */
export function startWorker(options: WorkerOptions): Worker {
  const id = options.workerId ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const stopped = new QueueWorker(id, options).run();
  return { id, stopped };
}

class QueueWorker {
  private readonly leaseMs: number;
  private readonly concurrency: number;
  private readonly running = new Map<string, { controller: AbortController; done: Promise<void> }>();
  private wakeFlag = false;
  private wakeUp: (() => void) | undefined;
  /** What this worker claims: its pool, and its own server's tasks when it serves one. */
  private routes: string[] = [SHARED_POOL];
  private readonly imageFields: (pipeline: string) => readonly string[];
  private readonly log: (line: string) => void;

  constructor(
    readonly id: string,
    private readonly o: WorkerOptions,
  ) {
    this.leaseMs = o.leaseMs ?? 30_000;
    this.concurrency = Math.max(1, o.concurrency ?? 1);
    this.log = o.log ?? (() => {});
    this.imageFields = o.imageFields ?? contractImageFields;
  }

  async run(): Promise<void> {
    const { signal } = this.o;
    await this.o.engines.start();
    await this.announce();
    const onAbort = () => this.wake();
    signal.addEventListener('abort', onAbort);
    const listener = await listenForTasks(this.o.pool, () => this.wake(), this.log);
    const reclaimer = setInterval(
      () => void this.reclaim().then(() => this.announce()),
      Math.max(250, Math.min(5_000, this.leaseMs / 2)),
    );
    try {
      await this.reclaim();
      while (!signal.aborted) {
        this.wakeFlag = false;
        await this.fillSlots();
        await this.sleep(this.o.pollMs ?? 1_000);
      }
    } finally {
      clearInterval(reclaimer);
      signal.removeEventListener('abort', onAbort);
      await listener.close();
      await this.drain();
      if (this.o.serverId !== undefined) {
        await setServerStatus(this.o.pool, this.o.serverId, 'offline').catch(() => {});
      }
    }
  }

  /**
   * A server's worker keeps its row's last_seen_at fresh and follows its owner: an operator may
   * assign the server to an enterprise owner while the worker runs.
   */
  private async announce(): Promise<void> {
    if (this.o.serverId === undefined) return;
    try {
      const server = await announceServer(this.o.pool, this.o.serverId);
      this.routes = [`server:${this.o.serverId}`, server.owner_id ? ownerPool(server.owner_id) : SHARED_POOL];
    } catch (error) {
      this.log(`announcing server ${this.o.serverId} failed: ${(error as Error).message}`);
    }
  }

  private async fillSlots(): Promise<void> {
    while (this.running.size < this.concurrency && !this.o.signal.aborted) {
      const leaseOwner = `${this.id}/${randomBytes(6).toString('hex')}`;
      let row: TaskRow | null;
      try {
        row = await claimTask(this.o.pool, {
          leaseOwner,
          routes: this.routes,
          leaseMs: this.leaseMs,
        });
      } catch (error) {
        this.log(`claim failed: ${(error as Error).message}`);
        return;
      }
      if (!row) return;
      const task = toTaskRecord(row);
      const controller = new AbortController();
      const done = this.runTask(task, leaseOwner, controller)
        .catch((error) => this.log(`task ${task.id}: ${(error as Error).message}`))
        .finally(() => {
          this.running.delete(task.id);
          this.wake();
        });
      this.running.set(task.id, { controller, done });
    }
  }

  private wake(): void {
    this.wakeFlag = true;
    this.wakeUp?.();
  }

  private sleep(ms: number): Promise<void> {
    if (this.wakeFlag || this.o.signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakeUp = () => {
        this.wakeUp = undefined;
        done();
      };
    });
  }

  private async reclaim(): Promise<void> {
    try {
      await inTransaction(this.o.pool, async (client) => {
        const rows = await reclaimExpired(client);
        for (const row of rows) {
          this.log(`task ${row.id}: lease expired, ${row.state === 'failed' ? 'failed' : 'queued again'}`);
          if (row.state === 'failed') await this.settleFailure(client, toTaskRecord(row));
        }
      });
    } catch (error) {
      this.log(`reclaim failed: ${(error as Error).message}`);
    }
  }

  private async drain(): Promise<void> {
    const all = [...this.running.values()];
    if (all.length === 0) return;
    const timeout = new Promise<'timeout'>((resolve) =>
      setTimeout(() => resolve('timeout'), this.o.drainMs ?? 10_000).unref(),
    );
    const finished = await Promise.race([
      Promise.all(all.map((r) => r.done)).then(() => 'done' as const),
      timeout,
    ]);
    if (finished === 'timeout') {
      for (const r of this.running.values()) r.controller.abort(new Error(SHUTDOWN));
      await Promise.all([...this.running.values()].map((r) => r.done));
    }
  }

  private async runTask(task: TaskRecord, leaseOwner: string, controller: AbortController): Promise<void> {
    const { signal } = controller;
    let progress: number | null = null;
    let message: string | null = null;
    let dirty = false;
    const beat = async () => {
      dirty = false;
      const held = await heartbeatTask(this.o.pool, {
        id: task.id,
        leaseOwner,
        leaseMs: this.leaseMs,
        progress,
        message,
      }).catch(() => true); // a failed heartbeat is retried; the lease decides, not one query
      if (!held) controller.abort(new Error(LEASE_LOST));
    };
    const heartbeat = setInterval(() => void beat(), Math.max(100, this.leaseMs / 3));
    const progressFlush = setInterval(() => dirty && void beat(), 500);
    const attemptMs = this.o.attemptTimeoutMs ?? 60 * 60_000;
    const deadline = setTimeout(
      () => controller.abort(new Error(`the attempt took longer than ${attemptMs / 1000} s`)),
      attemptMs,
    );
    try {
      let result: TaskResult;
      let outputKeys: string[];
      try {
        ({ result, outputKeys } = await this.execute(task, signal, (fraction, text) => {
          progress = Math.min(1, Math.max(0, fraction));
          message = text ?? null;
          dirty = true;
        }));
      } catch (error) {
        clearInterval(heartbeat);
        clearInterval(progressFlush);
        await this.onError(task, leaseOwner, signal, error);
        return;
      }
      clearInterval(heartbeat);
      clearInterval(progressFlush);
      const completed = await inTransaction(this.o.pool, async (client) => {
        if (task.kind === 'load_model' || task.kind === 'training') {
          const model = await settleModel(client, {
            ownerId: task.ownerId,
            taskId: task.id,
            status: 'ready',
            ...modelMarks(result.meta),
          });
          // sync_model names an existing model in its input; load and train registered a row.
          const named = typeof task.input.model_id === 'string' ? task.input.model_id : null;
          result = { ...result, model_id: result.model_id ?? model?.model_id ?? named };
        }
        const row = await completeTask(client, { id: task.id, leaseOwner, result, outputKeys });
        if (!row) throw new LeaseLostError();
        await this.settleSuccess(client, toTaskRecord(row));
        return true;
      }).catch((error) => {
        if (error instanceof LeaseLostError) return false;
        throw error;
      });
      if (!completed) {
        this.log(`task ${task.id}: finished after its lease was lost; another worker owns it`);
        if (task.outputKeys.length === 0)
          await Promise.all(outputKeys.map((key) => this.o.store.delete(key)));
      }
    } finally {
      clearInterval(heartbeat);
      clearInterval(progressFlush);
      clearTimeout(deadline);
    }
  }

  private async execute(
    task: TaskRecord,
    signal: AbortSignal,
    progress: (fraction: number, message?: string) => void,
  ): Promise<{ result: TaskResult; outputKeys: string[] }> {
    const engine = this.o.engines.engineFor(task.endpoint);
    const seed = typeof task.input.seed === 'number' && task.input.seed >= 0 ? task.input.seed : drawSeed();
    if (!engine) {
      // Registering a model is bookkeeping, not inference: without an engine that loads weights
      // the model row is simply marked ready.
      if (task.kind === 'load_model') return { result: { meta: {} }, outputKeys: [] };
      throw new FinalError(`no engine serves ${task.endpoint}`);
    }
    const job: EngineJob = {
      pipeline: task.endpoint,
      input: task.input,
      images: await this.fetchImages(task, signal),
      seed,
    };
    // A check the caller asked for is never skipped in silence: without a checker on this worker
    // the task fails before any compute is spent.
    if (task.input.safety_checker === true && !this.o.safety) {
      throw new FinalError(
        'safety_checker: this worker has no safety checker (enable the cpu engine in IMAGEGEN_ENGINES)',
      );
    }
    for (const preflight of this.o.preflights ?? []) {
      if (preflight.pipelines.includes(task.endpoint)) await preflight.check(job, signal);
    }
    signal.throwIfAborted();
    const output = await engine.run(job, { signal, progress });
    signal.throwIfAborted();
    if (task.input.safety_checker === true) await this.checkSafety(output, signal);
    const outputKeys = await this.storeOutputs(task, output);
    const started = task.startedAt?.getTime() ?? Date.now();
    const result: TaskResult = {
      ...(task.input.base64 === true
        ? { base64: output.images.map((image) => image.data.toString('base64')) }
        : {}),
      ...(output.text !== undefined ? { text: output.text } : {}),
      ...(typeof output.meta?.model_id === 'string' ? { model_id: output.meta.model_id } : {}),
      ...(task.kind === 'training' ? { training_duration_seconds: (Date.now() - started) / 1000 } : {}),
      meta: { ...output.meta, engine: engine.name, seed },
    };
    return { result, outputKeys };
  }

  private async fetchImages(task: TaskRecord, signal: AbortSignal): Promise<EngineJob['images']> {
    const images: Record<string, InputImage | readonly InputImage[]> = {};
    for (const field of this.imageFields(task.endpoint)) {
      const value = task.input[field];
      if (typeof value === 'string' && value !== '') {
        images[field] = await this.fetchOne(value, field, signal);
      } else if (Array.isArray(value)) {
        const list: InputImage[] = [];
        for (const [n, url] of value.entries()) {
          if (typeof url === 'string') list.push(await this.fetchOne(url, `${field}[${n}]`, signal));
        }
        images[field] = list;
      }
    }
    return images;
  }

  private async fetchOne(url: string, field: string, signal: AbortSignal): Promise<InputImage> {
    try {
      return await this.o.fetcher.fetchImage(url, field, signal);
    } catch (error) {
      if (signal.aborted) throw error;
      // The fetcher's InputFetchError already names the field and the reason.
      const text = (error as Error).message;
      throw new FinalError((error as Error).name === 'InputFetchError' ? text : `${field}: ${text}`);
    }
  }

  private async checkSafety(output: EngineResult, signal: AbortSignal): Promise<void> {
    for (const [n, image] of output.images.entries()) {
      const verdict = await this.o.safety!.classify(image, signal);
      if (verdict.unsafe) {
        const scores = Object.entries(verdict.scores)
          .sort((a, b) => b[1] - a[1])
          .slice(0, 2)
          .map(([label, score]) => `${label} ${score.toFixed(2)}`)
          .join(', ');
        throw new FinalError(
          `safety_checker: output image ${n + 1} of ${output.images.length} was classified unsafe (${scores})`,
        );
      }
    }
  }

  private async storeOutputs(task: TaskRecord, output: EngineResult): Promise<string[]> {
    const images = output.images;
    const keys = task.outputKeys.slice(0, images.length);
    if (keys.length < images.length) {
      const more = allocateOutputKeys(
        images.length,
        task.input.file_prefix,
        extensionFor(images[0]!.contentType),
      );
      keys.push(...more.slice(keys.length));
    }
    await Promise.all(images.map((image, n) => this.o.store.put(keys[n]!, image.data, image.contentType)));
    // Pre-allocated links the engine did not fill stay listed but answer 404, never stale data.
    return task.outputKeys.length > keys.length ? [...keys, ...task.outputKeys.slice(keys.length)] : keys;
  }

  private async onError(
    task: TaskRecord,
    leaseOwner: string,
    signal: AbortSignal,
    error: unknown,
  ): Promise<void> {
    const reason = signal.aborted ? (signal.reason as Error | undefined)?.message : undefined;
    if (reason === LEASE_LOST) {
      this.log(`task ${task.id}: lease lost, abandoned`);
      return;
    }
    if (reason === SHUTDOWN) {
      await releaseTask(this.o.pool, { id: task.id, leaseOwner });
      this.log(`task ${task.id}: released for another worker (shutdown)`);
      return;
    }
    const final = error instanceof FinalError || error instanceof EngineInputError;
    // Timed out: the engine saw the abort; the reason says why it was aborted.
    const cause = reason ?? (error as Error)?.message ?? String(error);
    const text = final ? (error as Error).message : `engine error: ${cause}`;
    const backoffMs = (this.o.retryBaseMs ?? 1_000) * 2 ** Math.max(0, task.attempts - 1);
    await inTransaction(this.o.pool, async (client) => {
      const row = await failTask(client, { id: task.id, leaseOwner, error: text, final, backoffMs });
      if (row?.state === 'failed') await this.settleFailure(client, toTaskRecord(row));
    });
    this.log(`task ${task.id}: attempt ${task.attempts} failed: ${text}`);
  }

  /** Inside the completing transaction: the owner's image records and the webhook. */
  private async settleSuccess(client: PoolClient, task: TaskRecord): Promise<void> {
    if (task.kind === 'generation' && task.outputKeys.length > 0) {
      await insertImages(client, {
        ownerId: task.ownerId,
        taskId: task.id,
        modelId: typeof task.input.model_id === 'string' ? task.input.model_id : null,
        images: task.outputKeys.map((key) => ({
          blobKey: key,
          downloadUrl: downloadUrl(this.o.publicUrl, key),
        })),
        json: { endpoint: task.endpoint, input: task.input, seed: task.result?.meta?.seed },
      });
    }
    await this.enqueueWebhook(client, task);
  }

  private async settleFailure(client: PoolClient, task: TaskRecord): Promise<void> {
    if (task.kind === 'load_model' || task.kind === 'training') {
      await settleModel(client, { ownerId: task.ownerId, taskId: task.id, status: 'failed' });
    }
    await this.enqueueWebhook(client, task);
  }

  private async enqueueWebhook(client: PoolClient, task: TaskRecord): Promise<void> {
    const url = task.input.webhook;
    if (typeof url !== 'string' || url === '' || !this.o.enqueueWebhook) return;
    await this.o.enqueueWebhook(client, {
      ownerId: task.ownerId,
      taskId: task.id,
      url,
      body: taskStatusBody(task, this.o.publicUrl),
    });
  }
}

/** The request fields that hold image URLs, from the contract's endpoint table. */
function contractImageFields(pipeline: string): readonly string[] {
  return endpointByPath(pipeline)?.imageFields ?? [];
}

/**
 * What an engine asks to be written on the model record it produced (`meta.model_tags`,
 * `meta.model_description`): the sandbox engine marks its training output as a sandbox model.
 */
function modelMarks(meta: TaskResult['meta']): { addTags?: string[]; descriptionNote?: string } {
  const tags = Array.isArray(meta?.model_tags)
    ? meta.model_tags.filter((tag): tag is string => typeof tag === 'string' && tag !== '')
    : [];
  const note = typeof meta?.model_description === 'string' ? meta.model_description : '';
  return { ...(tags.length > 0 ? { addTags: tags } : {}), ...(note ? { descriptionNote: note } : {}) };
}
