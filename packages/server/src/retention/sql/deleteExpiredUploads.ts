import type { Queryable } from '@imagegen/db';
import { LIVE_FILES } from './live-references.ts';

/**
 * Forgets up to `limit` uploads made before `cutoff`, oldest first, and answers their blob keys
 * for the caller to delete from the store in the same transaction. Rows another sweeper holds are
 * skipped, and so are uploads a live task or a model still names.
 */
export async function deleteExpiredUploads(db: Queryable, cutoff: Date, limit: number): Promise<string[]> {
  const result = await db.query<{ blob_key: string }>({
    name: 'deleteExpiredUploads',
    text: `WITH ${LIVE_FILES}
           DELETE FROM uploads WHERE id IN (
             SELECT f.id FROM uploads f
             WHERE f.created_at < $1
               AND NOT EXISTS (SELECT 1 FROM live_files l WHERE l.blob_key = f.blob_key)
             ORDER BY f.created_at LIMIT $2 FOR UPDATE OF f SKIP LOCKED)
           RETURNING blob_key`,
    values: [cutoff, limit],
  });
  return result.rows.map((row) => row.blob_key);
}
