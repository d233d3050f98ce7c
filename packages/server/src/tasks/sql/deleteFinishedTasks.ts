import type { Queryable } from '@imagegen/db';

/**
 * Forgets up to `limit` tasks that finished (succeeded, failed or cancelled) before `cutoff`, oldest
 * first, with their webhook deliveries and idempotency keys; answers how many. A queued or running
 * task is never one of them, nor one whose webhook is still being delivered; rows another sweeper
 * holds are skipped. The owner's images and the models a task made are kept (their own retention).
 */
export async function deleteFinishedTasks(db: Queryable, cutoff: Date, limit: number): Promise<number> {
  const result = await db.query({
    name: 'deleteFinishedTasks',
    text: `DELETE FROM tasks WHERE id IN (
             SELECT t.id FROM tasks t
             WHERE t.state IN ('succeeded', 'failed') AND t.finished_at < $1
               AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.task_id = t.id AND d.state = 'pending')
             ORDER BY t.finished_at LIMIT $2 FOR UPDATE OF t SKIP LOCKED)`,
    values: [cutoff, limit],
  });
  return result.rowCount ?? 0;
}
