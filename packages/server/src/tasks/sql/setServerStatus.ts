import { type Queryable, toStored } from '@imagegen/db';

/** The worker of these servers stopped (`offline`); the next start announces them `online` again. */
export async function setServerStatus(
  db: Queryable,
  serverIds: readonly string[],
  status: 'online' | 'offline',
): Promise<void> {
  await db.query({
    name: 'setServerStatus',
    text: 'UPDATE servers SET status = $2, last_seen_at = now() WHERE id = ANY($1::text[])',
    values: [toStored(serverIds), status],
  });
}
