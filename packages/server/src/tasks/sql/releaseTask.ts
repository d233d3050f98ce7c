import type { Queryable } from '@imagegen/db';

/**
 * Gives a running task back to the queue at shutdown, for another worker at once; the interrupted
 * attempt is not counted against the task.
 */
export async function releaseTask(
  db: Queryable,
  params: { id: string; leaseOwner: string },
): Promise<boolean> {
  const result = await db.query({
    name: 'releaseTask',
    text: `UPDATE tasks SET state = 'queued', attempts = greatest(attempts - 1, 0), run_at = now(),
             lease_owner = NULL, lease_expires_at = NULL, progress = NULL, progress_message = NULL
           WHERE id = $1 AND lease_owner = $2 AND state = 'running'`,
    values: [params.id, params.leaseOwner],
  });
  return result.rowCount === 1;
}
