import { type Queryable, toStored } from '@imagegen/db';

/**
 * Records that a model is synced to a destination: one of the owner's servers (`any` for all of
 * them), or the shared servers (`serverId` null, 0007_shared_model_syncs.sql). Syncing again to
 * the same destination refreshes `synced_at`.
 */
export async function insertModelSync(
  db: Queryable,
  sync: { modelRowId: string; ownerId: string; serverId: string | null },
): Promise<{ synced_at: Date }> {
  const { rows } = await db.query<{ synced_at: Date }>({
    name: 'insertModelSync',
    text: `INSERT INTO model_syncs (model_id, owner_id, server_id) VALUES ($1, $2, $3)
           ON CONFLICT (model_id, server_id) DO UPDATE SET synced_at = now()
           RETURNING synced_at`,
    values: [sync.modelRowId, sync.ownerId, toStored(sync.serverId)],
  });
  return rows[0]!;
}
