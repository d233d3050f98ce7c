import { fromStored, type Queryable, toStored } from '@imagegen/db';

/**
 * A worker says the servers it serves are alive and learns whose each one is. A server nobody
 * registered is created in the shared pool (an operator assigns it an owner with the CLI).
 */
export async function announceServers(
  db: Queryable,
  serverIds: readonly string[],
): Promise<{ id: string; owner_id: string | null }[]> {
  const result = await db.query<{ id: string; owner_id: string | null }>({
    name: 'announceServers',
    text: `INSERT INTO servers (id, status, last_seen_at)
           SELECT id, 'online', now() FROM unnest($1::text[]) AS ids(id)
           ON CONFLICT (id) DO UPDATE SET status = 'online', last_seen_at = now()
           RETURNING id, owner_id`,
    values: [toStored(serverIds)],
  });
  return fromStored(result.rows);
}
