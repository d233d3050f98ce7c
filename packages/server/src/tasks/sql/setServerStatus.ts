import { type Queryable, toStored } from '@imagegen/db';

/** A server's worker stopped (`offline`); the next start announces it `online` again. */
export async function setServerStatus(
  db: Queryable,
  serverId: string,
  status: 'online' | 'offline',
): Promise<void> {
  await db.query({
    name: 'setServerStatus',
    text: 'UPDATE servers SET status = $2, last_seen_at = now() WHERE id = $1',
    values: [toStored(serverId), status],
  });
}
