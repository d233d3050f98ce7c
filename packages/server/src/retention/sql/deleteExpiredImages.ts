import type { Queryable } from '@imagegen/db';
import { LIVE_FILES } from './live-references.ts';

/**
 * Forgets up to `limit` output images recorded before `cutoff`, oldest first, and answers their
 * blob keys for the caller to delete from the store in the same transaction. Rows another sweeper
 * holds are skipped, and so are files a live task or a model still names.
 */
export async function deleteExpiredImages(db: Queryable, cutoff: Date, limit: number): Promise<string[]> {
  const result = await db.query<{ blob_key: string }>({
    name: 'deleteExpiredImages',
    text: `WITH ${LIVE_FILES}
           DELETE FROM images WHERE id IN (
             SELECT f.id FROM images f
             WHERE f.creation_timestamp < $1
               AND NOT EXISTS (SELECT 1 FROM live_files l WHERE l.blob_key = f.blob_key)
             ORDER BY f.creation_timestamp LIMIT $2 FOR UPDATE OF f SKIP LOCKED)
           RETURNING blob_key`,
    values: [cutoff, limit],
  });
  return result.rows.map((row) => row.blob_key);
}
