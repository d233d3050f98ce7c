import { type Queryable, toStored } from '@imagegen/db';

export interface RoutingFacts {
  /** The plan of the owner's newest active subscription, or null. */
  plan: string | null;
  /** How many servers the owner has. */
  servers: number;
  /** Whether the named server exists and belongs to the owner. */
  owns_server: boolean;
}

export async function getRoutingFacts(
  db: Queryable,
  ownerId: string,
  serverId: string,
): Promise<RoutingFacts> {
  const result = await db.query<RoutingFacts>({
    name: 'getRoutingFacts',
    text: `SELECT
             (SELECT plan FROM subscriptions WHERE owner_id = $1 AND status = 'active'
                ORDER BY created_at DESC LIMIT 1) AS plan,
             (SELECT count(*)::int FROM servers WHERE owner_id = $1) AS servers,
             EXISTS (SELECT 1 FROM servers WHERE id = $2 AND owner_id = $1) AS owns_server`,
    values: [ownerId, toStored(serverId)],
  });
  return result.rows[0]!;
}
