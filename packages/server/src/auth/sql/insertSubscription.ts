import type { Queryable } from '@imagegen/db';

export interface SubscriptionRow {
  id: string;
  owner_id: string;
  plan: string;
  status: string;
  pod_id: string | null;
  pod_status: string;
  period_start: Date;
  period_end: Date | null;
}

export async function insertSubscription(
  db: Queryable,
  sub: { ownerId: string; plan: string; podId: string | null; periodEnd: Date | null },
): Promise<SubscriptionRow> {
  const { rows } = await db.query<SubscriptionRow>({
    name: 'insertSubscription',
    text: `INSERT INTO subscriptions (owner_id, plan, pod_id, period_end) VALUES ($1, $2, $3, $4)
           RETURNING id, owner_id, plan, status, pod_id, pod_status, period_start, period_end`,
    values: [sub.ownerId, sub.plan, sub.podId, sub.periodEnd],
  });
  return rows[0]!;
}
