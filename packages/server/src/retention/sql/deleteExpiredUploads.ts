import type { Queryable } from '@imagegen/db';
import { deleteExpiredFiles } from './expired-files.ts';

/** Forgets up to `limit` uploads made before `cutoff`, as `deleteExpiredFiles` says. */
export function deleteExpiredUploads(db: Queryable, cutoff: Date, limit: number): Promise<string[]> {
  return deleteExpiredFiles(
    db,
    {
      table: 'uploads',
      createdAt: 'created_at',
      lockName: 'lockExpiredUploads',
      deleteName: 'deleteExpiredUploads',
    },
    cutoff,
    limit,
  );
}
