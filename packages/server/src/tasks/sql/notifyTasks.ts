import type { Queryable } from '@imagegen/db';

/**
 * Wakes the workers listening on imagegen_tasks. The transaction of this statement carries
 * nothing but the notification, so it commits without waiting for a WAL flush (synchronous_commit
 * off for this transaction only): a lost notification costs one worker poll, never a task.
 */
export async function notifyTasks(db: Queryable): Promise<void> {
  await db.query({
    name: 'notifyTasks',
    text: `SELECT set_config('synchronous_commit', 'off', true), pg_notify('imagegen_tasks', '')`,
  });
}
