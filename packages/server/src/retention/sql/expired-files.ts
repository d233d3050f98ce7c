import type { Queryable } from '@imagegen/db';
import { LIVE_FILES } from './live-references.ts';

/** A table of stored files the sweeper expires: its name, its creation column, its statements' names. */
export interface FileTable {
  readonly table: 'images' | 'uploads';
  readonly createdAt: 'creation_timestamp' | 'created_at';
  readonly lockName: string;
  readonly deleteName: string;
}

/**
 * Forgets up to `limit` rows of `files` created before `cutoff`, oldest first, and answers their
 * blob keys for the caller to delete from the store in the same transaction (`db` is that
 * transaction's client). Rows another sweeper holds are skipped, and so are files a live task or
 * a model still names.
 *
 * Two statements: the first locks the candidates, the second deletes those no live task names in
 * a snapshot taken after the locks are held. A submission locks the files its task names
 * (tasks/sql/insertTasks.ts), so a task committed after the first statement's snapshot is seen by
 * the second, and one not yet committed waits for this transaction.
 */
export async function deleteExpiredFiles(
  db: Queryable,
  files: FileTable,
  cutoff: Date,
  limit: number,
): Promise<string[]> {
  const { table, createdAt } = files;
  const locked = await db.query<{ id: string }>({
    name: files.lockName,
    text: `WITH ${LIVE_FILES}
           SELECT f.id FROM ${table} f
           WHERE f.${createdAt} < $1 AND NOT EXISTS (SELECT 1 FROM live_files l WHERE l.blob_key = f.blob_key)
           ORDER BY f.${createdAt} LIMIT $2 FOR UPDATE OF f SKIP LOCKED`,
    values: [cutoff, limit],
  });
  if (locked.rows.length === 0) return [];
  const result = await db.query<{ blob_key: string }>({
    name: files.deleteName,
    text: `WITH ${LIVE_FILES}
           DELETE FROM ${table} f WHERE f.id = ANY($1::uuid[])
             AND NOT EXISTS (SELECT 1 FROM live_files l WHERE l.blob_key = f.blob_key)
           RETURNING f.blob_key`,
    values: [locked.rows.map((row) => row.id)],
  });
  return result.rows.map((row) => row.blob_key);
}
