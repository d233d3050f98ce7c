import { fromStored, type Queryable, toStored } from '@imagegen/db';

/**
 * The model row a load_model or train_model task registered becomes ready (or failed). An engine
 * may mark it on the way (the sandbox engine's training: tag `sandbox` and a note in front of the
 * description), so a placeholder model is never mistaken for a trained one; a real training adds
 * its file's sha256 and size, and its sample images.
 */
export async function settleModel(
  db: Queryable,
  params: {
    ownerId: string;
    taskId: string;
    status: 'ready' | 'failed';
    /** Tags to add to the comma-separated `tags`. */
    addTags?: readonly string[];
    /** Text to put in front of the description. */
    descriptionNote?: string;
    /** The model file the task stored: its sha256 (hex) and size. */
    file?: { sha256: string; bytes: number };
    /** Links of the pictures the task drew with the model (a training's validation prompt). */
    sampleImages?: readonly string[];
  },
): Promise<{ model_id: string } | null> {
  const tags = params.addTags?.length ? params.addTags.join(',') : null;
  const result = await db.query<{ model_id: string }>({
    name: 'settleModel',
    text: `UPDATE models SET status = $3,
             tags = CASE WHEN $4::text IS NULL THEN tags WHEN tags = '' THEN $4 ELSE tags || ',' || $4 END,
             description = CASE WHEN $5::text IS NULL THEN description
                                WHEN description = '' THEN $5 ELSE $5 || ' ' || description END,
             file_sha256 = COALESCE($6, file_sha256), file_bytes = COALESCE($7, file_bytes),
             sample_images = COALESCE($8::jsonb, sample_images)
           WHERE task_id = $2 AND owner_id = $1 RETURNING model_id`,
    values: [
      params.ownerId,
      params.taskId,
      params.status,
      toStored(tags),
      toStored(params.descriptionNote ?? null),
      params.file?.sha256 ?? null,
      params.file?.bytes ?? null,
      params.sampleImages?.length ? JSON.stringify(params.sampleImages) : null,
    ],
  });
  return fromStored(result.rows[0] ?? null);
}
