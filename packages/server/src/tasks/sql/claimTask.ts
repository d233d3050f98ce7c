import { fromStored, type Queryable, toStored } from '@imagegen/db';
import { TASKS_DOT_COLUMNS, type TaskRow } from './task-row.ts';

export interface ClaimParams {
  /** Unique per claim: fences every later write of this attempt. */
  leaseOwner: string;
  /** The routes the worker serves: its pool ('shared' or 'owner:<uuid>') and 'server:<id>'. */
  routes: readonly string[];
  leaseMs: number;
  /**
   * How many of one owner's tasks may run at once, by plan; a plan not named here (or 0) has no
   * cap. An owner at its cap is passed over, its tasks wait in the queue.
   */
  planConcurrency?: Readonly<Record<string, number>>;
}

/**
 * Claims the next task this worker may run, fairly between owners: among the owners with queued
 * tasks on the worker's routes, the one with the fewest tasks running, then the one served least
 * recently, then the one waiting longest, goes first; within an owner, oldest first. So one owner's thousand queued tasks delay
 * another owner's single task by at most the task each slot is running.
 *
 * Cost grows with the number of owners waiting, not with the number of tasks: owners are found
 * by walking the index one probe at a time, and each owner's head is one more probe.
 *
 * With caps per plan, each waiting owner's plan is one more probe (none without caps), an owner at
 * its cap is not ranked, and the claim of a capped owner's task counts its running tasks again
 * under a lock per owner (`tasks_owner_may_start`, 0012_task_limits.sql): the ranking's snapshot
 * may miss a claim another worker committed meanwhile. A claim that loses that race takes
 * nothing. A task whose deadline (Cancel-After) passed is never claimed; `expireDeadlines` fails it.
 */
export async function claimTask(db: Queryable, params: ClaimParams): Promise<TaskRow | null> {
  const result = await db.query<TaskRow>({
    name: 'claimTask',
    text: `WITH RECURSIVE walk(route, owner_id) AS (
             SELECT r.route, (SELECT owner_id FROM tasks
                              WHERE state = 'queued' AND route = r.route ORDER BY owner_id LIMIT 1)
             FROM unnest($2::text[]) AS r(route)
             UNION ALL
             SELECT w.route, (SELECT t.owner_id FROM tasks t
                              WHERE t.state = 'queued' AND t.route = w.route AND t.owner_id > w.owner_id
                              ORDER BY t.owner_id LIMIT 1)
             FROM walk w WHERE w.owner_id IS NOT NULL
           ),
           ranked AS MATERIALIZED (
             SELECT w.route, w.owner_id,
               (SELECT count(*) FROM tasks r WHERE r.owner_id = w.owner_id AND r.state = 'running') AS running,
               (SELECT s.started_at FROM tasks s WHERE s.owner_id = w.owner_id AND s.started_at IS NOT NULL
                  ORDER BY s.started_at DESC LIMIT 1) AS last_started,
               (SELECT h.created_at FROM tasks h WHERE h.state = 'queued' AND h.route = w.route
                  AND h.owner_id = w.owner_id ORDER BY h.created_at LIMIT 1) AS waiting_since,
               CASE WHEN $4::jsonb <> '{}' THEN
                 (SELECT nullif(($4::jsonb ->> s.plan)::integer, 0) FROM subscriptions s
                   WHERE s.owner_id = w.owner_id AND s.status = 'active'
                     AND (s.period_end IS NULL OR s.period_end > now())
                   ORDER BY s.created_at DESC LIMIT 1)
               END AS cap
             FROM walk w WHERE w.owner_id IS NOT NULL
             ORDER BY running, last_started NULLS FIRST, waiting_since
           ),
           picked AS (
             -- In rank order, the first owner whose head is free; the lateral runs lazily, one
             -- owner at a time, so only the chosen row is locked.
             SELECT head.id, u.cap FROM ranked u
             CROSS JOIN LATERAL (
               SELECT t.id FROM tasks t
               WHERE t.state = 'queued' AND t.route = u.route AND t.owner_id = u.owner_id AND t.run_at <= now()
                 AND (t.deadline_at IS NULL OR t.deadline_at > now())
               ORDER BY t.created_at
               LIMIT 1
               FOR UPDATE SKIP LOCKED
             ) head
             WHERE u.cap IS NULL OR u.running < u.cap
             LIMIT 1
           ),
           relaxed AS (
             -- A lost claim only puts the task back in the queue (completion is fenced by the
             -- lease and always durable), so this commit need not wait for the disk.
             SELECT set_config('synchronous_commit', 'off', true)
           )
           UPDATE tasks SET state = 'running', attempts = attempts + 1, lease_owner = $1,
             lease_expires_at = now() + make_interval(secs => $3::double precision / 1000),
             started_at = now(), progress = NULL, progress_message = NULL
           FROM picked, relaxed WHERE tasks.id = picked.id AND tasks.state = 'queued'
             AND (picked.cap IS NULL OR tasks_owner_may_start(tasks.owner_id, picked.cap))
           RETURNING ${TASKS_DOT_COLUMNS}`,
    values: [
      params.leaseOwner,
      toStored(params.routes),
      params.leaseMs,
      JSON.stringify(params.planConcurrency ?? {}),
    ],
  });
  return fromStored(result.rows[0] ?? null);
}
