import type { Queryable } from '@imagegen/db';

export interface KeyOwnerRow {
  owner_id: string;
  name: string;
  /** The owner's current subscription's plan, null without one. */
  plan: string | null;
}

/** The owner of an unrevoked key, with the plan of their newest active subscription. */
export async function findOwnerByKeyHash(db: Queryable, keyHash: Buffer): Promise<KeyOwnerRow | null> {
  const { rows } = await db.query<KeyOwnerRow>({
    name: 'findOwnerByKeyHash',
    text: `SELECT o.id AS owner_id, o.name,
                  (SELECT s.plan FROM subscriptions s
                    WHERE s.owner_id = o.id AND s.status = 'active'
                      AND (s.period_end IS NULL OR s.period_end > now())
                    ORDER BY s.created_at DESC LIMIT 1) AS plan
             FROM api_keys k JOIN owners o ON o.id = k.owner_id
            WHERE k.key_hash = $1 AND k.revoked_at IS NULL`,
    values: [keyHash],
  });
  return rows[0] ?? null;
}
