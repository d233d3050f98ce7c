import { fromStored, type Queryable } from '@imagegen/db';
import { IMAGE_COLUMNS, type ImageRow } from './image-row.ts';

export async function getImage(db: Queryable, ownerId: string, imageId: string): Promise<ImageRow | null> {
  const { rows } = await db.query<ImageRow>({
    name: 'getImage',
    text: `SELECT ${IMAGE_COLUMNS} FROM images WHERE owner_id = $1 AND id = $2`,
    values: [ownerId, imageId],
  });
  return fromStored(rows[0] ?? null);
}
