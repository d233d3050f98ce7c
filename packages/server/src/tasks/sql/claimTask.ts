import type { Queryable } from '../../db/pool.ts';
import { TASKS_DOT_COLUMNS, type TaskRow } from './task-row.ts';

export interface ClaimParams {
  /** Unique per claim: fences every later write of this attempt. */
  leaseOwner: string;
  /** The worker's server id (tasks routed to it), or null. */
  serverId: string | null;
  /** The pool the worker serves: 'shared' or 'owner:<uuid>'. */
  pool: string;
  leaseMs: number;
}

/**
 * Claims the next task this worker may run, fairly between owners: among the owners with
 * claimable tasks, the one with the fewest tasks running, then the one served least recently,
 * goes first; within an owner, oldest first. So one owner's thousand queued tasks delay another
 * owner's single task by at most the task each slot is running.
 */
export async function claimTask(db: Queryable, params: ClaimParams): Promise<TaskRow | null> {
  const result = await db.query<TaskRow>({
    name: 'claimTask',
    text: `WITH relaxed AS (
             -- A lost claim only puts the task back in the queue (completion is fenced by the
             -- lease and always durable), so this commit need not wait for the disk.
             SELECT set_config('synchronous_commit', 'off', true)
           ),
           claimable AS (
             SELECT id, owner_id, created_at FROM tasks
             WHERE state = 'queued' AND run_at <= now()
               AND (target_server = $2 OR (target_server IS NULL AND target_pool = $3))
           ),
           turns AS (
             SELECT o.owner_id,
               (SELECT count(*) FROM tasks r WHERE r.owner_id = o.owner_id AND r.state = 'running') AS running,
               (SELECT s.started_at FROM tasks s WHERE s.owner_id = o.owner_id AND s.started_at IS NOT NULL
                  ORDER BY s.started_at DESC LIMIT 1) AS last_started
             FROM (SELECT DISTINCT owner_id FROM claimable) o
           ),
           picked AS (
             SELECT t.id FROM tasks t
             JOIN claimable c ON c.id = t.id
             JOIN turns u ON u.owner_id = c.owner_id
             CROSS JOIN relaxed
             ORDER BY u.running, u.last_started NULLS FIRST, c.created_at
             LIMIT 1
             FOR UPDATE OF t SKIP LOCKED
           )
           UPDATE tasks SET state = 'running', attempts = attempts + 1, lease_owner = $1,
             lease_expires_at = now() + make_interval(secs => $4::double precision / 1000),
             started_at = now(), progress = NULL, progress_message = NULL
           FROM picked WHERE tasks.id = picked.id AND tasks.state = 'queued'
           RETURNING ${TASKS_DOT_COLUMNS}`,
    values: [params.leaseOwner, params.serverId, params.pool, params.leaseMs],
  });
  return result.rows[0] ?? null;
}
