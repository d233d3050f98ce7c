import { endpointByPath } from '@imagegen/contract';
import type { Queryable } from '@imagegen/db';
import { readCursor, writeCursor } from '../records/page-cursor.ts';
import { listOwnerTasks } from './sql/listOwnerTasks.ts';

export { InvalidCursorError } from '../records/page-cursor.ts';

/** One task as GET /tasks/v1 lists it (the contract's TaskListEntry). */
export interface TaskListEntry {
  id: string;
  pipeline: string;
  request: Record<string, unknown>;
  state: string;
  engine: string | null;
  placeholder: boolean;
  batch_id: string | null;
  created_at: string;
  finished_at: string | null;
  status_path: string;
}

export interface TaskListQuery {
  /** A listing state: queued, running, succeeded, failed (not cancelled) or cancelled. */
  readonly status?: string;
  readonly pipeline?: string;
  readonly batchId?: string;
  readonly limit: number;
  /** The `next_cursor` of the previous page. */
  readonly cursor?: string;
  /** The engines whose output is labelled placeholders: their tasks are listed `placeholder: true`. */
  readonly placeholderEngines: ReadonlySet<string>;
}

/**
 * The owner's tasks, newest first, a page at a time: each page ends with the cursor of the next
 * (null on the last). A cursor is opaque to clients: where the previous page stopped.
 */
export async function listTasks(
  db: Queryable,
  ownerId: string,
  query: TaskListQuery,
): Promise<{ tasks: TaskListEntry[]; next_cursor: string | null }> {
  const rows = await listOwnerTasks(db, {
    ownerId,
    state: query.status ?? null,
    endpoint: query.pipeline ?? null,
    batchId: query.batchId ?? null,
    after: query.cursor === undefined ? null : readCursor(query.cursor),
    // One more than the page: whether a next page exists, without counting.
    limit: query.limit + 1,
  });
  const page = rows.slice(0, query.limit);
  const last = page.at(-1);
  return {
    tasks: page.map((row) => ({
      id: row.id,
      pipeline: row.endpoint,
      request: row.input,
      state: row.cancelled ? 'cancelled' : row.state,
      engine: row.engine,
      placeholder: row.engine !== null && query.placeholderEngines.has(row.engine),
      batch_id: row.batch_id,
      created_at: row.created_at.toISOString(),
      finished_at: row.finished_at?.toISOString() ?? null,
      status_path: statusPath(row.endpoint, row.id),
    })),
    next_cursor: rows.length > query.limit && last ? writeCursor(last.created_us, last.id) : null,
  };
}

/** The task's status path, from the contract's endpoint table (`{task_id}` or `{training_id}`). */
function statusPath(endpoint: string, id: string): string {
  const template = endpointByPath(endpoint)?.status?.path ?? `${endpoint}/status/{task_id}`;
  return template.replace(/\{[^}]+\}/, id);
}
