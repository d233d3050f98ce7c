import type { Queryable } from '@imagegen/db';
import { LIVE_FILES } from './live-references.ts';

/**
 * Forgets up to `limit` output images recorded before `cutoff`, oldest first, and answers their
 * blob keys for the caller to delete from the store in the same transaction (`db` is that
 * transaction's client). Rows another sweeper holds are skipped, and so are files a live task or
 * a model still names. Two statements, for the reason deleteExpiredUploads gives.
 */
export async function deleteExpiredImages(db: Queryable, cutoff: Date, limit: number): Promise<string[]> {
  const locked = await db.query<{ id: string }>({
    name: 'lockExpiredImages',
    text: `WITH ${LIVE_FILES}
           SELECT f.id FROM images f
           WHERE f.creation_timestamp < $1
             AND NOT EXISTS (SELECT 1 FROM live_files l WHERE l.blob_key = f.blob_key)
           ORDER BY f.creation_timestamp LIMIT $2 FOR UPDATE OF f SKIP LOCKED`,
    values: [cutoff, limit],
  });
  if (locked.rows.length === 0) return [];
  const result = await db.query<{ blob_key: string }>({
    name: 'deleteExpiredImages',
    text: `WITH ${LIVE_FILES}
           DELETE FROM images f WHERE f.id = ANY($1::uuid[])
             AND NOT EXISTS (SELECT 1 FROM live_files l WHERE l.blob_key = f.blob_key)
           RETURNING f.blob_key`,
    values: [locked.rows.map((row) => row.id)],
  });
  return result.rows.map((row) => row.blob_key);
}
