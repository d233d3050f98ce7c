import { fromStored, type Queryable } from '@imagegen/db';
import { IMAGE_COLUMNS, type ImageRow } from './image-row.ts';

/**
 * The owner's images, newest first. `before` (an image_id) pages backwards: only images older
 * than that one; a cursor that is not the owner's image answers the first page.
 */
export async function listImages(
  db: Queryable,
  ownerId: string,
  page: { limit: number; before: string | null },
): Promise<ImageRow[]> {
  const { rows } = await db.query<ImageRow>({
    name: 'listImages',
    text: `SELECT ${IMAGE_COLUMNS} FROM images i
            WHERE i.owner_id = $1
              AND ($3::uuid IS NULL OR (i.creation_timestamp, i.id) <
                   (SELECT c.creation_timestamp, c.id FROM images c WHERE c.id = $3::uuid AND c.owner_id = $1)
                   IS NOT FALSE)
            ORDER BY i.creation_timestamp DESC, i.id DESC LIMIT $2`,
    values: [ownerId, page.limit, page.before],
  });
  return fromStored(rows);
}
