import type { Queryable } from '../../db/pool.ts';

/** The model row a load_model or train_model task registered becomes ready (or failed). */
export async function settleModel(
  db: Queryable,
  params: { ownerId: string; taskId: string; status: 'ready' | 'failed' },
): Promise<{ model_id: string } | null> {
  const result = await db.query<{ model_id: string }>({
    name: 'settleModel',
    text: `UPDATE models SET status = $3 WHERE task_id = $2 AND owner_id = $1 RETURNING model_id`,
    values: [params.ownerId, params.taskId, params.status],
  });
  return result.rows[0] ?? null;
}
