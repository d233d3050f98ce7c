import { isUuid, type Queryable } from '@imagegen/db';
import { Batcher, type Pending } from './batcher.ts';
import { getTaskStatusesByIds, type TaskStatusRow } from './sql/getTaskStatusesByIds.ts';
import type { TaskRecord } from './types.ts';

/**
 * A task as a status poll sees it: what `taskStatusBody` reads, whose it is, and what the
 * estimates of a pending task (queue-estimates.ts) and a status stream read.
 */
export type TaskStatus = Pick<
  TaskRecord,
  'id' | 'ownerId' | 'endpoint' | 'kind' | 'state' | 'progress' | 'result' | 'error' | 'outputKeys' | 'input'
> & {
  /** Counts the changes of state and progress: a status stream numbers its events with it. */
  readonly version: number;
  readonly route: string;
  readonly createdMs: number;
  readonly startedMs: number | null;
};

// The status body only asks whether the request had `base64`; the rest of the input stays unread.
const ASKED_BASE64: Readonly<Record<string, unknown>> = Object.freeze({ base64: true });
const NO_BASE64: Readonly<Record<string, unknown>> = Object.freeze({});

function toTaskStatus(row: TaskStatusRow): TaskStatus {
  return {
    id: row.id,
    ownerId: row.owner_id,
    endpoint: row.endpoint,
    kind: row.kind,
    state: row.state,
    progress: row.progress,
    result: row.result,
    error: row.error,
    outputKeys: row.output_keys,
    input: row.asks_base64 ? ASKED_BASE64 : NO_BASE64,
    version: row.version,
    route: row.route,
    createdMs: row.created_ms,
    startedMs: row.started_ms,
  };
}

/** Ids per statement: large enough for any burst of polls, small enough to stay one quick index scan. */
const MAX_BATCH = 256;
/**
 * Statements in flight at once. One would leave the API idle while it waits for its round trip;
 * a few keep the database and the event loop both busy.
 */
const MAX_IN_FLIGHT = 3;

interface StatusQuery {
  readonly ownerId: string;
  readonly id: string;
}

/**
 * Status polls are the API's most frequent request. Like the group commit of submissions, reads
 * that arrive while one is in flight gather and go as one `id = ANY(...)` statement: under load
 * 64 polls cost one round trip instead of 64; alone, a poll goes at once. Nothing is cached: each
 * answer is read after its request arrived.
 */
export class TaskStatusReader {
  private readonly batcher: Batcher<StatusQuery, TaskStatus | null>;

  constructor(db: Queryable) {
    this.batcher = new Batcher({
      lanes: MAX_IN_FLIGHT,
      maxBatch: MAX_BATCH,
      run: (batch) => readBatch(db, batch),
    });
  }

  /** The owner's task, or null for a missing id, a malformed id and another owner's id alike. */
  read(ownerId: string, id: string): Promise<TaskStatus | null> {
    if (!isUuid(id)) return Promise.resolve(null);
    return this.batcher.add({ ownerId, id: id.toLowerCase() });
  }
}

async function readBatch(db: Queryable, batch: Pending<StatusQuery, TaskStatus | null>[]): Promise<void> {
  const rows = await getTaskStatusesByIds(db, [...new Set(batch.map((pending) => pending.item.id))]);
  const byId = new Map(rows.map((row) => [row.id, row]));
  for (const pending of batch) {
    const row = byId.get(pending.item.id);
    pending.resolve(row && row.owner_id === pending.item.ownerId ? toTaskStatus(row) : null);
  }
}
