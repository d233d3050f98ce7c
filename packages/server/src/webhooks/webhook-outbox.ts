import type { PoolClient } from '@imagegen/db';
import { insertDelivery } from './sql/insertDelivery.ts';

export interface WebhookMessage {
  readonly ownerId: string;
  readonly taskId: string;
  readonly url: string;
  /** The task's final status as the API answers it, then its `id` and `path` (taskWebhookBody). */
  readonly body: unknown;
}

/**
 * Puts a task's webhook in the outbox. Call it INSIDE the transaction that finishes the task: the
 * delivery then exists exactly when the task's final state does, and the dispatchers are woken
 * when that transaction commits.
 */
export async function enqueueWebhook(client: PoolClient, message: WebhookMessage): Promise<void> {
  await insertDelivery(client, {
    ownerId: message.ownerId,
    taskId: message.taskId,
    url: message.url,
    payload: JSON.stringify(message.body),
  });
}
