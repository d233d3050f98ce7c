import type { Queryable } from '@imagegen/db';

export interface LastServed {
  owner_id: string;
  /** When a task of the owner last started (epoch milliseconds), or null: never. */
  last_started_ms: number | null;
}

/** When each owner was last served: the claim ranks the owner served least recently first. */
export async function getLastServed(db: Queryable, ownerIds: readonly string[]): Promise<LastServed[]> {
  const result = await db.query<LastServed>({
    name: 'getLastServed',
    text: `SELECT o.owner_id,
             (SELECT date_part('epoch', s.started_at) * 1000 FROM tasks s
              WHERE s.owner_id = o.owner_id AND s.started_at IS NOT NULL
              ORDER BY s.started_at DESC LIMIT 1) AS last_started_ms
           FROM unnest($1::uuid[]) AS o(owner_id)`,
    values: [ownerIds],
  });
  return result.rows;
}
