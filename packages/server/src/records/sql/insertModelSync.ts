import type { Queryable } from '../../db/pool.ts';

export async function insertModelSync(
  db: Queryable,
  sync: { modelRowId: string; ownerId: string; serverId: string },
): Promise<{ synced_at: Date }> {
  const { rows } = await db.query<{ synced_at: Date }>({
    name: 'insertModelSync',
    text: `INSERT INTO model_syncs (model_id, owner_id, server_id) VALUES ($1, $2, $3)
           ON CONFLICT (model_id, server_id) DO UPDATE SET synced_at = now()
           RETURNING synced_at`,
    values: [sync.modelRowId, sync.ownerId, sync.serverId],
  });
  return rows[0]!;
}
