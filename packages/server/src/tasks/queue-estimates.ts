import { endpoints } from '@imagegen/contract';
import type { Queryable } from '@imagegen/db';
import { ownerPool, SHARED_POOL } from './routing.ts';
import { getLastServed } from './sql/getLastServed.ts';
import { getQueuedRuns } from './sql/getQueuedRuns.ts';
import { getRecentDurations } from './sql/getRecentDurations.ts';
import { getRunningCounts } from './sql/getRunningCounts.ts';
import type { PendingEstimates } from './status-body.ts';
import type { TaskStatus } from './task-status-reader.ts';

/** The freshest a snapshot of the queue is taken; a large queue is taken less often (see below). */
const MIN_REFRESH_MS = 2_000;
/**
 * A snapshot may keep a database connection busy 1% of the time at most: a 60 ms one (a queue of
 * about 100,000 tasks) is taken every 6 s. Measured with `bench -- api`, whose status phase polls
 * queued tasks: at 1/50 the snapshots cost status reads a few percent of their throughput.
 */
const REFRESH_COST_SHARE = 100;
/** The stalest a snapshot may get, however slow its last taking was (a busy database). */
const MAX_REFRESH_MS = 15_000;

/** The task-creating pipelines, whose recent run times give the eta. */
const PIPELINES = endpoints
  .filter((e) => e.kind === 'generation' || e.kind === 'load_model' || e.kind === 'training')
  .map((e) => e.path);

/** The queued tasks of one owner on one route, in creation order (the order a claim takes them). */
interface Lane {
  readonly route: string;
  readonly ownerId: string;
  /** The distinct creation instants (epoch ms), ascending: a group commit's tasks share one. */
  readonly created: Float64Array;
  /** before[i]: how many of the lane's tasks were created before created[i]. */
  readonly before: Int32Array;
  readonly total: number;
}

/** The queue as one moment saw it: everything a pending task's estimates are computed from. */
interface Snapshot {
  readonly takenAt: number;
  readonly shared: readonly Lane[];
  readonly sharedLaneOf: ReadonlyMap<string, Lane>;
  /** Each owner's lanes on its own pool and servers (server_id routing). */
  readonly enterprise: ReadonlyMap<string, readonly Lane[]>;
  /** The claim's ranking of owners on the shared pool: lower goes first within a round. */
  readonly turnOf: (ownerId: string, waitingSince: number) => readonly [number, number, number];
  /** Tasks running now on the shared pool, and per enterprise owner. */
  readonly runningShared: number;
  readonly runningEnterprise: ReadonlyMap<string, number>;
  /** Recent mean run time per pipeline, in seconds. */
  readonly seconds: ReadonlyMap<string, number>;
  /** Positions already counted on the shared pool, by `owner turns`: many polls ask the same. */
  readonly counted: Map<string, number>;
}

/**
 * `queue_position` and `eta_seconds` of pending tasks, without slowing status reads: each read
 * looks its task up in a snapshot of the queue held in memory (a binary search), and the snapshot
 * is retaken in the background when a read finds it older than two seconds (longer for a long
 * queue), so a busy API costs the database one compressed walk of the queue every few seconds,
 * not one count per poll. Nobody polling a pending task: no snapshot is taken at all.
 *
 * Positions follow the claim (sql/claimTask.ts): on the shared pool owners take turns, one task
 * each per round, the owner with fewer tasks running (then the one served least recently) first;
 * an enterprise owner's tasks (its pool `any` and its servers) are its alone and go oldest first.
 * They are estimates: a snapshot can be seconds old, and tasks created by one statement share an
 * instant, so the count is of the tasks created strictly before this one.
 */
export class QueueEstimates {
  private snapshot: Snapshot | null = null;
  private taking: Promise<void> | null = null;
  private staleAfterMs = MIN_REFRESH_MS;

  constructor(private readonly db: Queryable) {}

  /**
   * The estimates of a queued or running task; empty when nothing is known (yet). At once from
   * the snapshot held; a promise only while the first snapshot is taken.
   */
  of(task: TaskStatus): PendingEstimates | Promise<PendingEstimates> {
    const snapshot = this.snapshot;
    if (!snapshot) return this.refresh().then(() => (this.snapshot ? estimate(this.snapshot, task) : {}));
    if (Date.now() - snapshot.takenAt > this.staleAfterMs) void this.refresh();
    return estimate(snapshot, task);
  }

  private refresh(): Promise<void> {
    this.taking ??= this.take().finally(() => {
      this.taking = null;
    });
    return this.taking;
  }

  private async take(): Promise<void> {
    const started = performance.now();
    try {
      this.snapshot = await takeSnapshot(this.db);
    } catch {
      // The database is unreachable: status reads go on without estimates (or with older ones).
    }
    const cost = REFRESH_COST_SHARE * (performance.now() - started);
    this.staleAfterMs = Math.min(MAX_REFRESH_MS, Math.max(MIN_REFRESH_MS, cost));
  }
}

async function takeSnapshot(db: Queryable): Promise<Snapshot> {
  const [runs, running, durations] = await Promise.all([
    getQueuedRuns(db),
    getRunningCounts(db),
    getRecentDurations(db, PIPELINES),
  ]);
  const lanes = toLanes(runs);
  const shared = lanes.filter((lane) => lane.route === SHARED_POOL);
  const enterprise = new Map<string, Lane[]>();
  for (const lane of lanes) {
    if (lane.route === SHARED_POOL) continue;
    const owned = enterprise.get(lane.ownerId);
    if (owned) owned.push(lane);
    else enterprise.set(lane.ownerId, [lane]);
  }
  const runningByOwner = new Map<string, number>();
  const runningEnterprise = new Map<string, number>();
  let runningShared = 0;
  for (const row of running) {
    runningByOwner.set(row.owner_id, (runningByOwner.get(row.owner_id) ?? 0) + row.running);
    if (row.route === SHARED_POOL) runningShared += row.running;
    else runningEnterprise.set(row.owner_id, (runningEnterprise.get(row.owner_id) ?? 0) + row.running);
  }
  const lastServed = new Map(
    (await getLastServed(db, [...new Set(shared.map((lane) => lane.ownerId))])).map((row) => [
      row.owner_id,
      row.last_started_ms,
    ]),
  );
  const seconds = new Map<string, number>();
  for (const row of durations) if (row.seconds !== null) seconds.set(row.endpoint, row.seconds);
  return {
    takenAt: Date.now(),
    shared,
    sharedLaneOf: new Map(shared.map((lane) => [lane.ownerId, lane])),
    enterprise,
    // The claim's order: fewer running first, then served least recently (never: first), then
    // waiting longest.
    turnOf: (ownerId, waitingSince) => [
      runningByOwner.get(ownerId) ?? 0,
      lastServed.get(ownerId) ?? Number.NEGATIVE_INFINITY,
      waitingSince,
    ],
    runningShared,
    runningEnterprise,
    seconds,
    counted: new Map(),
  };
}

function toLanes(runs: Awaited<ReturnType<typeof getQueuedRuns>>): Lane[] {
  const lanes: Lane[] = [];
  let start = 0;
  for (let end = 1; end <= runs.length; end++) {
    const first = runs[start]!;
    const next = runs[end];
    if (next && next.route === first.route && next.owner_id === first.owner_id) continue;
    const count = end - start;
    const created = new Float64Array(count);
    const before = new Int32Array(count);
    let total = 0;
    for (let n = 0; n < count; n++) {
      const run = runs[start + n]!;
      created[n] = run.created_ms;
      before[n] = total;
      total += run.tasks;
    }
    lanes.push({ route: first.route, ownerId: first.owner_id, created, before, total });
    start = end;
  }
  return lanes;
}

/** How many of the lane's tasks were created before `createdMs`: a binary search. */
function aheadIn(lane: Lane, createdMs: number): number {
  let low = 0;
  let high = lane.created.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (lane.created[mid]! < createdMs) low = mid + 1;
    else high = mid;
  }
  return low < lane.created.length ? lane.before[low]! : lane.total;
}

function estimate(snapshot: Snapshot, task: TaskStatus): PendingEstimates {
  const seconds = snapshot.seconds.get(task.endpoint);
  if (task.state === 'running') {
    if (seconds === undefined && !task.progress) return {};
    const elapsed = task.startedMs === null ? 0 : Math.max(0, Date.now() - task.startedMs) / 1000;
    // Reported progress says the most; without it, the pipeline's usual run time.
    const left = task.progress ? (elapsed * (1 - task.progress)) / task.progress : seconds! - elapsed;
    return left >= 0 ? { eta_seconds: tenths(left) } : {};
  }
  if (task.state !== 'queued') return {};
  const shared = task.route === SHARED_POOL;
  const position = shared ? sharedPosition(snapshot, task) : enterprisePosition(snapshot, task);
  if (seconds === undefined) return { queue_position: position };
  // The tasks ahead share the slots busy now (at least one), then this one runs.
  const slots = Math.max(
    1,
    shared ? snapshot.runningShared : (snapshot.runningEnterprise.get(task.ownerId) ?? 0),
  );
  return { queue_position: position, eta_seconds: tenths((position / slots + 1) * seconds) };
}

/**
 * On an enterprise route every task is the owner's: a server's worker serves the server and the
 * owner's pool (`any`), and the pool is served by all of the owner's servers.
 */
function enterprisePosition(snapshot: Snapshot, task: TaskStatus): number {
  const pool = ownerPool(task.ownerId);
  let ahead = 0;
  for (const lane of snapshot.enterprise.get(task.ownerId) ?? []) {
    if (task.route !== pool && lane.route !== task.route && lane.route !== pool) continue;
    ahead += aheadIn(lane, task.createdMs);
  }
  return ahead;
}

/**
 * On the shared pool the owners take turns: before this task (the owner's `turns`-th waiting)
 * each other owner gets as many turns, one more if it ranks first within a round.
 */
function sharedPosition(snapshot: Snapshot, task: TaskStatus): number {
  const own = snapshot.sharedLaneOf.get(task.ownerId);
  const turns = own ? aheadIn(own, task.createdMs) : 0;
  const key = `${task.ownerId} ${turns}`;
  const known = snapshot.counted.get(key);
  if (known !== undefined) return known;
  const mine = snapshot.turnOf(task.ownerId, own?.created[0] ?? task.createdMs);
  let ahead = turns;
  for (const lane of snapshot.shared) {
    if (lane === own) continue;
    const first = ranksBefore(snapshot.turnOf(lane.ownerId, lane.created[0]!), mine);
    ahead += Math.min(lane.total, turns + (first ? 1 : 0));
  }
  snapshot.counted.set(key, ahead);
  return ahead;
}

function ranksBefore(a: readonly number[], b: readonly number[]): boolean {
  for (let n = 0; n < a.length; n++) if (a[n] !== b[n]) return a[n]! < b[n]!;
  return false;
}

function tenths(seconds: number): number {
  return Math.round(seconds * 10) / 10;
}
