import type { Queryable } from '@imagegen/db';
import { TASK_EVENTS_CHANNEL } from '../../task-events.ts';

/**
 * Stores the newest preview of a running task and announces it ('<id> preview <seq>'), only while
 * `leaseOwner` holds the task: an attempt that lost it, or a task that ended, stores nothing. A
 * preview lost in a crash costs nothing, so the commit does not wait for the disk. False when
 * nothing was stored.
 */
export async function saveTaskPreview(
  db: Queryable,
  params: { taskId: string; leaseOwner: string; contentType: string; image: Buffer },
): Promise<boolean> {
  const result = await db.query({
    name: 'saveTaskPreview',
    text: `WITH relaxed AS (SELECT set_config('synchronous_commit', 'off', true)),
           saved AS (
             INSERT INTO task_previews (task_id, content_type, image)
             SELECT id, $3, $4 FROM tasks, relaxed
             WHERE id = $1 AND lease_owner = $2 AND state = 'running'
             ON CONFLICT (task_id) DO UPDATE SET seq = task_previews.seq + 1,
               content_type = excluded.content_type, image = excluded.image, updated_at = now()
             RETURNING task_id, seq)
           SELECT pg_notify('${TASK_EVENTS_CHANNEL}', task_id::text || ' preview ' || seq::text) FROM saved`,
    values: [params.taskId, params.leaseOwner, params.contentType, params.image],
  });
  return result.rowCount === 1;
}
