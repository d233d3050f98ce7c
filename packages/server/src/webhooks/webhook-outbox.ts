import type { Queryable } from '@imagegen/db';
import type { WebhookEvent } from '../tasks/types.ts';
import { insertDelivery } from './sql/insertDelivery.ts';

export interface WebhookMessage {
  readonly ownerId: string;
  readonly taskId: string;
  readonly url: string;
  /** The task's status as the API answers it, then its `id` and `path` (taskWebhookBody). */
  readonly body: unknown;
  /** Which moment of the task it reports (default `completed`). */
  readonly event?: WebhookEvent;
}

/**
 * Puts a task's webhook call in the outbox. Call it for `completed` INSIDE the transaction that
 * finishes the task: the delivery then exists exactly when the task's final state does. The
 * dispatchers are woken when the inserting transaction commits.
 */
export async function enqueueWebhook(db: Queryable, message: WebhookMessage): Promise<void> {
  await insertDelivery(db, {
    ownerId: message.ownerId,
    taskId: message.taskId,
    url: message.url,
    payload: JSON.stringify(message.body),
    event: message.event ?? 'completed',
  });
}
