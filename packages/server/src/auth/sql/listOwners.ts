import type { Queryable } from '@imagegen/db';

export interface OwnerListRow {
  id: string;
  name: string;
  plan: string | null;
  keys: number;
  created_at: Date;
}

export async function listOwners(db: Queryable): Promise<OwnerListRow[]> {
  const { rows } = await db.query<OwnerListRow>({
    name: 'listOwners',
    text: `SELECT o.id, o.name, o.created_at,
                  (SELECT s.plan FROM subscriptions s WHERE s.owner_id = o.id AND s.status = 'active'
                    ORDER BY s.created_at DESC LIMIT 1) AS plan,
                  (SELECT count(*)::int FROM api_keys k WHERE k.owner_id = o.id AND k.revoked_at IS NULL) AS keys
             FROM owners o ORDER BY o.created_at`,
    values: [],
  });
  return rows;
}
