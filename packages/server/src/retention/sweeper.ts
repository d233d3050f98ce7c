/**
 * Retention: what the product keeps, and for how long. The sweeper deletes what is older than the
 * policy in small batches (each one statement, or one transaction with its files), oldest first.
 * Every batch takes its rows with FOR UPDATE SKIP LOCKED, so any number of workers can sweep at
 * once: each row is deleted, and counted, by exactly one of them.
 *
 * It never touches a task that is queued or running, nor a file such a task names (an upload or
 * an earlier output among its inputs, recorded at submission) or a model shows; models are never
 * removed by age. A submission and the sweeper lock a file's row in turn, so a file is never
 * deleted under a task submitted a moment ago (retention/sql/expired-files.ts). Files
 * go through the blob store, so a bucket is swept as a local directory is.
 */
import { inTransaction, type Pool, type Queryable } from '@imagegen/db';
import type { LineLog } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { BlobStore } from '../storage/blob-store.ts';
import { deleteExpiredIdempotencyKeys, deleteFinishedTasks } from '../tasks/index.ts';
import { deleteExpiredAnalyticsEvents } from './sql/deleteExpiredAnalyticsEvents.ts';
import { deleteExpiredImages } from './sql/deleteExpiredImages.ts';
import { deleteExpiredSearchEvents } from './sql/deleteExpiredSearchEvents.ts';
import { deleteExpiredUploads } from './sql/deleteExpiredUploads.ts';
import { deleteExpiredUsage } from './sql/deleteExpiredUsage.ts';
import { deleteExpiredWebhookAttempts } from './sql/deleteExpiredWebhookAttempts.ts';

/** Days each kind of record is kept (the RETENTION_*_DAYS settings); null keeps it forever. */
export interface RetentionPolicy {
  /** Output images (their files and their records in the owner's image list). */
  readonly outputs: number | null;
  /** Uploaded input images. */
  readonly uploads: number | null;
  /** Finished task rows (their status, result, webhook deliveries), counted from when they ended. */
  readonly tasks: number | null;
  readonly webhookAttempts: number | null;
  /** The docs site's page views and search insights events. */
  readonly analytics: number | null;
  /**
   * Usage records (what each finished task cost, read by owners at /usage/v1), counted from when
   * the task ended. Kept apart from the task rows, and longer: they are what billing reads.
   */
  readonly usage: number | null;
}

/** A retry with the same Idempotency-Key answers the same task for 24 hours; then the key is free. */
export const IDEMPOTENCY_KEY_HOURS = 24;

/** What one sweep removed, by kind (the `kind` label of imagegen_retention_removed_total). */
export interface SweepCounts {
  outputs: number;
  uploads: number;
  tasks: number;
  webhook_attempts: number;
  analytics_events: number;
  search_events: number;
  idempotency_keys: number;
  usage_records: number;
}

export interface SweepOptions {
  readonly pool: Pool;
  readonly store: BlobStore;
  readonly policy: RetentionPolicy;
  /** The sweep's clock: a test sweeps days ahead by passing a later time. */
  readonly now: Date;
  /** Rows per batch (default 100). */
  readonly batchSize?: number;
  /** Where it counts what it removed (default: not counted). */
  readonly metrics?: Metrics;
}

const DAY_MS = 86_400_000;

/** Deletes everything the policy lets go of at `now`, batch after batch; answers what went. */
export async function sweepExpired(options: SweepOptions): Promise<SweepCounts> {
  const { pool, store, policy, now } = options;
  const limit = options.batchSize ?? 100;
  const before = (days: number | null) => (days === null ? null : new Date(now.getTime() - days * DAY_MS));
  const withFiles =
    (remove: (db: Queryable, cutoff: Date, limit: number) => Promise<string[]>) =>
    (_db: Queryable, cutoff: Date, n: number) =>
      // The rows stay locked until their files are gone: a store that fails rolls them back for
      // the next sweep, and a file whose row is gone is never left behind.
      inTransaction(pool, async (client) => {
        const keys = await remove(client, cutoff, n);
        await Promise.all(keys.map((key) => store.delete(key)));
        return keys.length;
      });
  const kinds: [
    keyof SweepCounts,
    Date | null,
    (db: Queryable, cutoff: Date, n: number) => Promise<number>,
  ][] = [
    ['outputs', before(policy.outputs), withFiles(deleteExpiredImages)],
    ['uploads', before(policy.uploads), withFiles(deleteExpiredUploads)],
    ['tasks', before(policy.tasks), deleteFinishedTasks],
    ['webhook_attempts', before(policy.webhookAttempts), deleteExpiredWebhookAttempts],
    ['analytics_events', before(policy.analytics), deleteExpiredAnalyticsEvents],
    ['search_events', before(policy.analytics), deleteExpiredSearchEvents],
    [
      'idempotency_keys',
      new Date(now.getTime() - IDEMPOTENCY_KEY_HOURS * 3_600_000),
      deleteExpiredIdempotencyKeys,
    ],
    ['usage_records', before(policy.usage), deleteExpiredUsage],
  ];
  const counts = Object.fromEntries(kinds.map(([kind]) => [kind, 0])) as unknown as SweepCounts;
  for (const [kind, cutoff, remove] of kinds) {
    if (cutoff === null) continue;
    for (;;) {
      const removed = await remove(pool, cutoff, limit);
      counts[kind] += removed;
      if (removed > 0) options.metrics?.retentionRemoved.inc({ kind }, removed);
      // A short batch: nothing older is left, another sweeper holds the rest, or a task
      // submitted a moment ago names a file of it (kept; the next sweep looks again).
      if (removed < limit) break;
    }
  }
  return counts;
}

export interface RetentionSweeperOptions extends Omit<SweepOptions, 'now'> {
  /** Time between the end of one sweep and the start of the next (RETENTION_SWEEP_SECONDS). */
  readonly intervalMs: number;
  /** Aborting it stops the sweeper after the batch in progress. */
  readonly signal: AbortSignal;
  readonly log?: LineLog;
}

/** Sweeps at once, then every `intervalMs`, until `signal` aborts; resolves when it has stopped. */
export async function runRetentionSweeper(options: RetentionSweeperOptions): Promise<void> {
  const { signal, intervalMs, log } = options;
  while (!signal.aborted) {
    try {
      const counts = await sweepExpired({ ...options, now: new Date() });
      const removed = Object.entries(counts).filter(([, n]) => n > 0);
      if (removed.length > 0)
        log?.(`retention: removed ${removed.map(([kind, n]) => `${n} ${kind}`).join(', ')}`);
    } catch (error) {
      log?.(`retention: sweep failed, trying again in ${intervalMs / 1000} s: ${(error as Error).message}`);
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, intervalMs);
      signal.addEventListener('abort', done, { once: true });
      function done() {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      }
    });
  }
}
