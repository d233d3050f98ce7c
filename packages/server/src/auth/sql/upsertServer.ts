import { fromStored, type Queryable, toStored } from '@imagegen/db';

export interface ServerRow {
  id: string;
  owner_id: string | null;
  status: string;
  last_seen_at: Date | null;
}

/** Registers a routing target: owner null = the shared pool, else that enterprise owner's server. */
export async function upsertServer(
  db: Queryable,
  server: { id: string; ownerId: string | null },
): Promise<ServerRow> {
  const { rows } = await db.query<ServerRow>({
    name: 'upsertServer',
    text: `INSERT INTO servers (id, owner_id) VALUES ($1, $2)
           ON CONFLICT (id) DO UPDATE SET owner_id = EXCLUDED.owner_id
           RETURNING id, owner_id, status, last_seen_at`,
    values: [toStored(server.id), server.ownerId],
  });
  return fromStored(rows[0]!);
}
