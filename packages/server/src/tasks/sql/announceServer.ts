import { type Queryable, toStored } from '@imagegen/db';

/**
 * A worker serving a server id says it is alive and learns whose server it is. A server nobody
 * registered is created in the shared pool (an operator assigns it an owner with the CLI).
 */
export async function announceServer(db: Queryable, serverId: string): Promise<{ owner_id: string | null }> {
  const result = await db.query<{ owner_id: string | null }>({
    name: 'announceServer',
    text: `INSERT INTO servers (id, status, last_seen_at) VALUES ($1, 'online', now())
           ON CONFLICT (id) DO UPDATE SET status = 'online', last_seen_at = now()
           RETURNING owner_id`,
    values: [toStored(serverId)],
  });
  return result.rows[0]!;
}
