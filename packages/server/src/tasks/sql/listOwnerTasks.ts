import { fromStored, type Queryable, toStored } from '@imagegen/db';
import type { TaskState } from '../types.ts';

export interface ListedTaskRow {
  id: string;
  endpoint: string;
  /** The validated request as stored: defaults filled, seed resolved. */
  input: Record<string, unknown>;
  state: TaskState;
  /** The engine that ran the task's last attempt (its result's meta), or null. */
  engine: string | null;
  cancelled: boolean;
  batch_id: string | null;
  created_at: Date;
  finished_at: Date | null;
  /** created_at in whole microseconds (text: beyond a double's exact range): the next page's cursor. */
  created_us: string;
}

export interface ListOwnerTasksParams {
  ownerId: string;
  /** A listing state: a queue state, or `cancelled` (a failed task its caller ended). */
  state: string | null;
  endpoint: string | null;
  batchId: string | null;
  /** Answer only tasks after this one in the order (created_us and id of the last one listed). */
  after: { createdUs: string; id: string } | null;
  limit: number;
}

/**
 * One page of the owner's tasks, newest first, on tasks_owner_newest. The page starts after the
 * cursor's task by (created_at, id), so tasks submitted meanwhile neither repeat nor shift a page.
 * Batch ids are stored encoded (toStored), so a filter is encoded the same way.
 */
export async function listOwnerTasks(db: Queryable, params: ListOwnerTasksParams): Promise<ListedTaskRow[]> {
  const result = await db.query<ListedTaskRow>({
    name: 'listOwnerTasks',
    text: `SELECT id, endpoint, input, state, result->'meta'->>'engine' AS engine, cancelled_at IS NOT NULL AS cancelled, batch_id, created_at, finished_at,
             (extract(epoch from created_at) * 1000000)::bigint::text AS created_us
           FROM tasks
           WHERE owner_id = $1
             AND (created_at, id) < (
               coalesce(timestamptz 'epoch' + $5::bigint * interval '1 microsecond', 'infinity'),
               coalesce($6::uuid, 'ffffffff-ffff-ffff-ffff-ffffffffffff'))
             AND ($2::text IS NULL
               OR (CASE WHEN cancelled_at IS NOT NULL THEN 'cancelled' ELSE state END) = $2)
             AND ($3::text IS NULL OR endpoint = $3)
             AND ($4::text IS NULL OR batch_id = $4)
           ORDER BY created_at DESC, id DESC
           LIMIT $7`,
    values: [
      params.ownerId,
      params.state,
      toStored(params.endpoint),
      toStored(params.batchId),
      params.after?.createdUs ?? null,
      params.after?.id ?? null,
      params.limit,
    ],
  });
  return fromStored(result.rows);
}
