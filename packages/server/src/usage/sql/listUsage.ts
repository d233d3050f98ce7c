import { fromStored, type Queryable } from '@imagegen/db';

export interface UsageRow {
  day: string;
  pipeline: string;
  tasks: number;
  succeeded: number;
  failed: number;
  images: number;
  pixels: number;
  run_seconds: number;
  queue_seconds: number;
}

/**
 * An owner's usage records that finished in [from, to), summed by UTC day and pipeline, by day
 * then pipeline. The index on (owner_id, finished_at) bounds the scan to the range asked for.
 */
export async function listUsage(
  db: Queryable,
  params: { ownerId: string; from: Date; to: Date },
): Promise<UsageRow[]> {
  const result = await db.query<UsageRow>({
    name: 'listUsage',
    text: `SELECT to_char(finished_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, pipeline,
             count(*)::integer AS tasks,
             count(*) FILTER (WHERE succeeded)::integer AS succeeded,
             count(*) FILTER (WHERE NOT succeeded)::integer AS failed,
             sum(images)::float8 AS images, sum(pixels)::float8 AS pixels,
             sum(run_seconds) AS run_seconds, sum(queue_seconds) AS queue_seconds
           FROM task_usage
           WHERE owner_id = $1 AND finished_at >= $2 AND finished_at < $3
           GROUP BY 1, 2
           ORDER BY 1, 2`,
    values: [params.ownerId, params.from, params.to],
  });
  return fromStored(result.rows);
}
