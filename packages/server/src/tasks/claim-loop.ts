import { randomBytes } from 'node:crypto';
import { inTransaction } from '@imagegen/db';
import { CANCELLED, DEADLINE_ERROR, holdLease, SHUTDOWN } from './attempt-lease.ts';
import { runTask, type TaskOutcome } from './run-task.ts';
import { settleError, settleFailure, settleSuccess } from './settle-task.ts';
import { announceServers } from './sql/announceServers.ts';
import { claimTask } from './sql/claimTask.ts';
import { expireDeadlines } from './sql/expireDeadlines.ts';
import { reclaimExpired } from './sql/reclaimExpired.ts';
import { setServerStatus } from './sql/setServerStatus.ts';
import { type TaskRow, toTaskRecord } from './sql/task-row.ts';
import { type TaskChange, taskEvents } from './task-events.ts';
import { listenForTasks } from './task-notifications.ts';
import type { TaskRecord } from './types.ts';
import { taskFields, taskLabels, type WorkerContext } from './worker-context.ts';
import { type WorkerRoutes, workerRoutes } from './worker-routes.ts';

/** Cancels remembered for tasks this worker may have claimed but not yet registered. */
const RECENT_CANCELS = 256;
/**
 * Claims one worker has in flight at once, at most: each holds a connection of the worker's
 * pool (WORKER_POOL_SIZE, 6 by default, of which one or two listen) for its round trip.
 */
const CLAIMS_IN_FLIGHT = 3;

/**
 * The worker's loop: keeps up to `concurrency` attempts running, claiming the next task (fairly,
 * by routing) whenever a slot frees, a notification arrives or the poll interval passes; aborts
 * an attempt whose task its caller cancelled; requeues or fails tasks whose lease expired; and on
 * shutdown drains what runs.
 */
export class ClaimLoop {
  private readonly running = new Map<string, { controller: AbortController; done: Promise<void> }>();
  /**
   * A cancel can be heard before the claim that took the task has answered (they travel on two
   * connections): the last few cancelled ids are kept, and a task claimed among them is aborted
   * at once.
   */
  private readonly recentCancels = new Set<string>();
  private wakeFlag = false;
  private wakeUp: (() => void) | undefined;
  /** The enterprise server ids this worker serves: its own, and its engines' servers. */
  private readonly serverIds: string[];
  /** What this worker claims, and where each task may run: known owners once announced. */
  private routing: WorkerRoutes;
  /** Whether some plan's running tasks are capped (PLAN_CONCURRENCY). */
  private readonly capped: boolean;
  /** Resolves once the engines have started and the loop listens for tasks (readiness). */
  readonly ready: Promise<void>;
  private markReady: () => void = () => {};

  constructor(private readonly ctx: WorkerContext) {
    this.ready = new Promise((resolve) => {
      this.markReady = resolve;
    });
    const { serverId } = ctx;
    const engineServers = ctx.engines.serverNames();
    this.serverIds = [...new Set([...(serverId === undefined ? [] : [serverId]), ...engineServers])];
    this.capped = Object.values(ctx.planConcurrency ?? {}).some((cap) => cap > 0);
    // Until the first announcement says whose servers they are, every one counts as shared.
    this.routing = workerRoutes(undefined, engineServers, new Map());
  }

  async run(): Promise<void> {
    const { signal, pool } = this.ctx;
    await this.ctx.engines.start();
    await this.announce();
    const onAbort = () => this.wake();
    signal.addEventListener('abort', onAbort);
    const listener = await listenForTasks(pool, () => this.wake(), this.ctx.log);
    // Cancels reach a running attempt within a round trip; the heartbeat, which finds the task no
    // longer running, is the last resort.
    const unwatch = await taskEvents(pool, this.ctx.log).subscribe((change) => this.onTaskChange(change));
    this.markReady();
    const reclaimer = setInterval(
      () => void this.reclaim().then(() => this.announce()),
      Math.max(250, Math.min(5_000, this.ctx.leaseMs / 2)),
    );
    try {
      await this.reclaim();
      while (!signal.aborted) {
        this.wakeFlag = false;
        await this.fillSlots();
        await this.sleep(this.ctx.pollMs);
      }
    } finally {
      clearInterval(reclaimer);
      signal.removeEventListener('abort', onAbort);
      await listener.close();
      await this.drain();
      unwatch();
      if (this.serverIds.length > 0) {
        await setServerStatus(pool, this.serverIds, 'offline').catch(() => {});
      }
    }
  }

  /**
   * A server's worker keeps its rows' last_seen_at fresh and follows their owners: an operator may
   * assign a server to an enterprise owner while the worker runs.
   */
  private async announce(): Promise<void> {
    if (this.serverIds.length === 0) return;
    try {
      const rows = await announceServers(this.ctx.pool, this.serverIds);
      const owners = new Map(rows.map((row) => [row.id, row.owner_id]));
      this.routing = workerRoutes(this.ctx.serverId, this.ctx.engines.serverNames(), owners);
    } catch (error) {
      this.ctx.log(`announcing server ${this.serverIds.join(', ')} failed: ${(error as Error).message}`);
    }
  }

  /**
   * Claims tasks while slots are free, several at once: a claim is a round trip to PostgreSQL,
   * and one at a time a worker whose tasks end quickly (a pool of ComfyUI servers, each
   * finishing prompts every few milliseconds) could start no more tasks a second than one over
   * that round trip. A wave starts one claim per free slot, at most CLAIMS_IN_FLIGHT; a wave
   * that comes back short found the queue empty, and the loop waits to be woken. Under caps per
   * plan a claim also comes back empty when another claim took the capped owner's last free
   * place first (see claimTask), so a short wave that took something is followed by another: it
   * ranks that owner as full and takes the next owner's task.
   *
   * Claims of one wave rank owners from the same moment, so two may take one owner's first and
   * second task where one at a time would have given the second to the next owner: fairness
   * holds per wave, not per claim, and a task behind another owner's backlog still waits for at
   * most one claim per slot.
   */
  private async fillSlots(): Promise<void> {
    while (!this.ctx.signal.aborted) {
      const wave = Math.min(this.ctx.concurrency - this.running.size, CLAIMS_IN_FLIGHT);
      if (wave <= 0) return;
      const claimed = await Promise.all(Array.from({ length: wave }, () => this.claimOne()));
      if (!claimed.every(Boolean) && !(this.capped && claimed.some(Boolean))) return;
    }
  }

  /** One claim; when it took a task, its attempt is started. False when there was none (or it failed). */
  private async claimOne(): Promise<boolean> {
    const leaseOwner = `${this.ctx.id}/${randomBytes(6).toString('hex')}`;
    let row: TaskRow | null;
    try {
      row = await claimTask(this.ctx.pool, {
        leaseOwner,
        routes: this.routing.routes,
        leaseMs: this.ctx.leaseMs,
        planConcurrency: this.ctx.planConcurrency,
      });
    } catch (error) {
      this.ctx.log(`claim failed: ${(error as Error).message}`);
      return false;
    }
    if (!row) return false;
    const task = toTaskRecord(row);
    this.ctx.metrics?.tasksClaimed.inc(taskLabels(this.ctx, task));
    this.ctx.log('task claimed', { ...taskFields(task, 'info'), worker: this.ctx.id });
    const controller = new AbortController();
    if (this.recentCancels.has(task.id)) controller.abort(new Error(CANCELLED));
    const done = this.attempt(task, leaseOwner, controller)
      .catch((error) => this.ctx.log(`task ${task.id}: ${(error as Error).message}`, taskFields(task)))
      .finally(() => {
        this.running.delete(task.id);
        this.wake();
      });
    this.running.set(task.id, { controller, done });
    return true;
  }

  /** One attempt of a claimed task: run under a held lease, then settled either way. */
  private async attempt(task: TaskRecord, leaseOwner: string, controller: AbortController): Promise<void> {
    const lease = holdLease(this.ctx, task, leaseOwner, controller);
    let outcome: TaskOutcome;
    try {
      const servers = this.routing.placement(task);
      outcome = await runTask(this.ctx, task, controller.signal, lease, servers);
    } catch (error) {
      await lease.stop();
      await settleError(this.ctx, task, leaseOwner, controller.signal, error);
      return;
    }
    await lease.stop();
    await settleSuccess(this.ctx, task, leaseOwner, outcome);
  }

  private onTaskChange(change: TaskChange | null): void {
    if (change?.state !== 'cancelled') return;
    const attempt = this.running.get(change.id);
    if (attempt) {
      attempt.controller.abort(new Error(CANCELLED));
      return;
    }
    this.recentCancels.add(change.id);
    if (this.recentCancels.size > RECENT_CANCELS) {
      this.recentCancels.delete(this.recentCancels.values().next().value as string);
    }
  }

  private wake(): void {
    this.wakeFlag = true;
    this.wakeUp?.();
  }

  private sleep(ms: number): Promise<void> {
    if (this.wakeFlag || this.ctx.signal.aborted) return Promise.resolve();
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

  /**
   * Expired leases: the task goes back to the queue, or fails for good when its attempts ran out.
   * Passed deadlines: a queued task fails without running.
   */
  private async reclaim(): Promise<void> {
    try {
      await inTransaction(this.ctx.pool, async (client) => {
        for (const row of await expireDeadlines(client, { error: DEADLINE_ERROR })) {
          const task = toTaskRecord(row);
          this.ctx.log(`task ${row.id}: its deadline passed before it ran`, taskFields(task));
          await settleFailure(this.ctx, client, task);
          this.ctx.metrics?.tasksFailed.inc(taskLabels(this.ctx, task));
        }
        const rows = await reclaimExpired(client);
        for (const row of rows) {
          const task = toTaskRecord(row);
          this.ctx.log(
            `task ${row.id}: lease expired, ${row.state === 'failed' ? 'failed' : 'queued again'}`,
            taskFields(task),
          );
          if (row.state === 'failed') {
            await settleFailure(this.ctx, client, task);
            this.ctx.metrics?.tasksFailed.inc(taskLabels(this.ctx, task));
          }
        }
      });
    } catch (error) {
      this.ctx.log(`reclaim failed: ${(error as Error).message}`);
    }
  }

  /** Running attempts get `drainMs` to finish; then they are aborted and released to the queue. */
  private async drain(): Promise<void> {
    const all = [...this.running.values()];
    if (all.length === 0) return;
    const timeout = new Promise<'timeout'>((resolve) =>
      setTimeout(() => resolve('timeout'), this.ctx.drainMs).unref(),
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
}
