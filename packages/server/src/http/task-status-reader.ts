import type { Queryable } from '../db/pool.ts';
import { isUuid } from '../db/uuid.ts';
import { getTaskStatusesByIds, type TaskStatusRow } from '../tasks/sql/getTaskStatusesByIds.ts';
import type { TaskRecord } from '../tasks/types.ts';

/** A task as a status poll sees it: what `taskStatusBody` reads, and whose it is. */
export type TaskStatus = Pick<
  TaskRecord,
  'id' | 'ownerId' | 'endpoint' | 'kind' | 'state' | 'progress' | 'result' | 'error' | 'outputKeys' | 'input'
>;

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
  };
}

/** Ids per statement: large enough for any burst of polls, small enough to stay one quick index scan. */
const MAX_BATCH = 256;
/**
 * Statements in flight at once. One would leave the API idle while it waits for its round trip;
 * a few keep the database and the event loop both busy.
 */
const MAX_IN_FLIGHT = 3;

interface Waiting {
  ownerId: string;
  id: string;
  resolve(task: TaskStatus | null): void;
  reject(error: unknown): void;
}

/**
 * Status polls are the API's most frequent request. Like the group commit of submissions, reads
 * that arrive while one is in flight gather and go as one `id = ANY(...)` statement: under load
 * 64 polls cost one round trip instead of 64; alone, a poll goes at once. Nothing is cached: each
 * answer is read after its request arrived.
 */
export class TaskStatusReader {
  private waiting: Waiting[] = [];
  private inFlight = 0;
  /** Statements waiting for the end of this event-loop turn before they take their ids. */
  private gathering = 0;

  constructor(private readonly db: Queryable) {}

  /** The owner's task, or null for a missing id, a malformed id and another owner's id alike. */
  read(ownerId: string, id: string): Promise<TaskStatus | null> {
    if (!isUuid(id)) return Promise.resolve(null);
    return new Promise((resolve, reject) => {
      this.waiting.push({ ownerId, id: id.toLowerCase(), resolve, reject });
      if (this.gathering === 0 && this.inFlight < MAX_IN_FLIGHT) void this.flush();
    });
  }

  /**
   * One statement lane. Before each statement it lets the current event-loop turn finish, so the
   * polls of every request read in this turn share the statement instead of the first going alone
   * (without this, statements carried 3 ids on average at 64 connections).
   */
  private async flush(): Promise<void> {
    this.inFlight++;
    try {
      for (;;) {
        this.gathering++;
        await endOfTurn();
        this.gathering--;
        if (this.waiting.length === 0) break;
        const group = this.waiting.splice(0, MAX_BATCH);
        try {
          const rows = await getTaskStatusesByIds(this.db, [...new Set(group.map((w) => w.id))]);
          const byId = new Map(rows.map((row) => [row.id, row]));
          for (const w of group) {
            const row = byId.get(w.id);
            w.resolve(row && row.owner_id === w.ownerId ? toTaskStatus(row) : null);
          }
        } catch (error) {
          for (const w of group) w.reject(error);
        }
      }
    } finally {
      this.inFlight--;
    }
  }
}

function endOfTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
