import { fromStored, type Queryable } from '@imagegen/db';
import type { ServerRow } from './upsertServer.ts';

export async function listServers(db: Queryable): Promise<ServerRow[]> {
  const { rows } = await db.query<ServerRow>({
    name: 'listServers',
    text: 'SELECT id, owner_id, status, last_seen_at FROM servers ORDER BY id',
    values: [],
  });
  return fromStored(rows);
}
