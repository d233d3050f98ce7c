import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks signatures (standardwebhooks.com): HMAC-SHA256 over
 * `<webhook-id>.<webhook-timestamp>.<body>` with the owner's secret, sent as `v1,<base64>`.
 * Any Standard Webhooks library verifies them (the tests use the reference one).
 */

export interface WebhookHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** A new owner's secret: `whsec_` + base64 of 24 random bytes. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

export function signWebhook(
  secret: string,
  messageId: string,
  timestamp: Date,
  payload: string,
): WebhookHeaders {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
  const seconds = Math.floor(timestamp.getTime() / 1000).toString();
  const signature = createHmac('sha256', key).update(`${messageId}.${seconds}.${payload}`).digest('base64');
  return { 'webhook-id': messageId, 'webhook-timestamp': seconds, 'webhook-signature': `v1,${signature}` };
}

/** The webhook-id of a delivery: the same on every retry, so receivers can drop duplicates. */
export function messageIdOf(deliveryId: string): string {
  return `msg_${deliveryId.replaceAll('-', '')}`;
}
