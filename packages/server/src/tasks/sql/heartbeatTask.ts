import { type Queryable, toStored } from '@imagegen/db';

/** Renews the lease and stores progress; false when the lease was lost (reclaimed by another). */
export async function heartbeatTask(
  db: Queryable,
  params: {
    id: string;
    leaseOwner: string;
    leaseMs: number;
    progress: number | null;
    message: string | null;
  },
): Promise<boolean> {
  const result = await db.query({
    name: 'heartbeatTask',
    text: `UPDATE tasks SET lease_expires_at = now() + make_interval(secs => $3::double precision / 1000),
             progress = $4, progress_message = $5
           WHERE id = $1 AND lease_owner = $2 AND state = 'running'`,
    values: [params.id, params.leaseOwner, params.leaseMs, params.progress, toStored(params.message)],
  });
  return result.rowCount === 1;
}
