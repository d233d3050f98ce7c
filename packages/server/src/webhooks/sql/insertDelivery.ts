import { type Queryable, toStored } from '@imagegen/db';

/** Adds a delivery to the outbox and wakes the dispatchers when the transaction commits. */
export async function insertDelivery(
  db: Queryable,
  params: { ownerId: string; taskId: string | null; url: string; payload: string; event: string },
): Promise<string> {
  const result = await db.query<{ id: string }>({
    name: 'insertWebhookDelivery',
    text: `WITH inserted AS (
             INSERT INTO webhook_deliveries (owner_id, task_id, url, payload, event)
             VALUES ($1, $2, $3, $4, $5)
             RETURNING id
           )
           SELECT id, pg_notify('imagegen_webhooks', '') FROM inserted`,
    values: [params.ownerId, params.taskId, toStored(params.url), params.payload, params.event],
  });
  return (result.rows[0] as { id: string }).id;
}
