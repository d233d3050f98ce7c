import { type Queryable, toStored } from '@imagegen/db';

/** The owner's image records (ImageInfo / UserImage), one per stored output of a task. */
export async function insertImages(
  db: Queryable,
  params: {
    ownerId: string;
    taskId: string;
    modelId: string | null;
    images: readonly { blobKey: string; downloadUrl: string }[];
    json: Record<string, unknown>;
  },
): Promise<void> {
  const { ownerId, taskId, modelId, images, json } = toStored(params);
  await db.query({
    name: 'insertImages',
    text: `INSERT INTO images (owner_id, task_id, model_id, blob_key, download_url, json)
           SELECT $1, $2, $3, i.blob_key, i.download_url, $5
           FROM jsonb_to_recordset($4::jsonb) AS i(blob_key text, download_url text)`,
    values: [
      ownerId,
      taskId,
      modelId,
      JSON.stringify(images.map((i) => ({ blob_key: i.blobKey, download_url: i.downloadUrl }))),
      JSON.stringify(json),
    ],
  });
}
