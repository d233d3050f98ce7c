import { fromStored, type Queryable, toStored, toStoredJson } from '@imagegen/db';
import { usageInsert, usageValues } from '../../usage/sql/usage-insert.ts';
import { NOTHING_KNOWN, type UsageFacts } from '../../usage/usage-facts.ts';
import type { TaskResult } from '../types.ts';
import { TASK_COLUMNS, type TaskRow } from './task-row.ts';

/** An image record (ImageInfo / UserImage) of one stored output. */
export interface ImageRecord {
  readonly blobKey: string;
  readonly downloadUrl: string;
}

/**
 * Marks the task succeeded, only while this claim still holds it (exactly-once completion), and
 * records the owner's images of its outputs and its usage in the same statement: one round trip,
 * atomic without a transaction of its own. Nothing is recorded when the claim no longer holds the
 * task.
 */
export async function completeTask(
  db: Queryable,
  params: {
    id: string;
    leaseOwner: string;
    result: TaskResult;
    outputKeys: readonly string[];
    /** The images to record (default none, as for model tasks); they share `imageJson` and `modelId`. */
    images?: readonly ImageRecord[];
    imageJson?: Record<string, unknown>;
    modelId?: string | null;
    /** What its usage record says (default: nothing known, no outputs). */
    usage?: UsageFacts;
  },
): Promise<TaskRow | null> {
  const { result, imageJson, modelId } = toStored({
    result: params.result,
    imageJson: params.imageJson ?? {},
    modelId: params.modelId ?? null,
  });
  const images = (params.images ?? []).map((image) => ({
    blob_key: image.blobKey,
    download_url: image.downloadUrl,
  }));
  const rows = await db.query<TaskRow>({
    name: 'completeTask',
    text: `WITH done AS (
             UPDATE tasks SET state = 'succeeded', result = $3, output_keys = $4, error = NULL, progress = 1,
               finished_at = now(), lease_owner = NULL, lease_expires_at = NULL
             WHERE id = $1 AND lease_owner = $2 AND state = 'running'
             RETURNING ${TASK_COLUMNS}
           ), recorded AS (
             INSERT INTO images (owner_id, task_id, model_id, blob_key, download_url, json)
             SELECT done.owner_id, done.id, $6, i.blob_key, i.download_url, $7
             FROM done, jsonb_to_recordset($5::jsonb) AS i(blob_key text, download_url text)
           ), usage AS (
             ${usageInsert('done', 8)}
           )
           SELECT * FROM done`,
    values: [
      params.id,
      params.leaseOwner,
      JSON.stringify(result),
      params.outputKeys,
      toStoredJson(images),
      modelId,
      JSON.stringify(imageJson),
      ...usageValues(params.usage ?? NOTHING_KNOWN),
    ],
  });
  return fromStored(rows.rows[0] ?? null);
}
