import type { Queryable } from '@imagegen/db';

export async function insertUpload(
  db: Queryable,
  upload: { ownerId: string; blobKey: string; contentType: string; sizeBytes: number },
): Promise<{ id: string }> {
  const { rows } = await db.query<{ id: string }>({
    name: 'insertUpload',
    text: 'INSERT INTO uploads (owner_id, blob_key, content_type, size_bytes) VALUES ($1, $2, $3, $4) RETURNING id',
    values: [upload.ownerId, upload.blobKey, upload.contentType, upload.sizeBytes],
  });
  return rows[0]!;
}
