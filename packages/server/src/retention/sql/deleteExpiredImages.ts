import type { Queryable } from '@imagegen/db';
import { deleteExpiredFiles } from './expired-files.ts';

/** Forgets up to `limit` output images recorded before `cutoff`, as `deleteExpiredFiles` says. */
export function deleteExpiredImages(db: Queryable, cutoff: Date, limit: number): Promise<string[]> {
  return deleteExpiredFiles(
    db,
    {
      table: 'images',
      createdAt: 'creation_timestamp',
      lockName: 'lockExpiredImages',
      deleteName: 'deleteExpiredImages',
    },
    cutoff,
    limit,
  );
}
