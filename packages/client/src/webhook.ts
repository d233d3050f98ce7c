import { WebhookVerificationError } from './errors.ts';
import type { AnyWebhookBody } from './types.ts';

/**
 * Checks a webhook the API sent, per Standard Webhooks: `webhook-signature` holds one or more
 * `v1,<base64>` HMAC-SHA256 signatures of `<webhook-id>.<webhook-timestamp>.<body>` under the
 * owner's secret (`whsec_<base64 key>`, from `GET /webhook_secret/v1`), and `webhook-timestamp`
 * must be within the tolerance of now, so a captured delivery cannot be replayed later. Web
 * Crypto only (`crypto.subtle`, whose verify compares in constant time), so it runs in Node 20+,
 * browsers and edge runtimes alike.
 */

/** The request's headers: a fetch Headers, Node's `request.headers`, or a plain object. */
export type WebhookHeaders =
  | Headers
  | Readonly<Record<string, string | readonly string[] | undefined>>
  | {
      readonly 'webhook-id'?: string | undefined;
      readonly 'webhook-timestamp'?: string | undefined;
      readonly 'webhook-signature'?: string | undefined;
    };

export interface VerifyWebhookOptions {
  /** The owner's signing secret, `whsec_...`. */
  readonly secret: string;
  readonly headers: WebhookHeaders;
  /** The body exactly as received (parse it only after it is verified). */
  readonly body: string | Uint8Array | ArrayBuffer;
  /** How far `webhook-timestamp` may be from now, in seconds (default 300). */
  readonly toleranceSeconds?: number;
  /** The time to check the timestamp against (default: now). */
  readonly now?: Date | number;
}

const DEFAULT_TOLERANCE_SECONDS = 5 * 60;

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  // Node lower-cases header names; another object may not have.
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  const value = record[name] ?? Object.entries(record).find(([key]) => key.toLowerCase() === name)?.[1];
  return typeof value === 'string' ? value : value?.[0];
}

function base64Bytes(text: string): Uint8Array | undefined {
  try {
    return Uint8Array.from(atob(text), (char) => char.charCodeAt(0));
  } catch {
    return undefined;
  }
}

/**
 * Resolves with the parsed body when the delivery is genuine (the task's final status, its `id`
 * and `path`); rejects with a WebhookVerificationError that says what failed otherwise.
 */
export async function verifyWebhook<T = AnyWebhookBody>(options: VerifyWebhookOptions): Promise<T> {
  const id = header(options.headers, 'webhook-id');
  const timestamp = header(options.headers, 'webhook-timestamp');
  const signatures = header(options.headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) {
    throw new WebhookVerificationError(
      'missing webhook-id, webhook-timestamp or webhook-signature header: not a signed webhook',
    );
  }
  if (!/^\d{1,12}$/.test(timestamp)) throw new WebhookVerificationError('webhook-timestamp is not a time');
  const now = options.now === undefined ? Date.now() : Number(options.now);
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (Math.abs(now / 1000 - Number(timestamp)) > tolerance) {
    throw new WebhookVerificationError(
      `webhook-timestamp is more than ${tolerance} s away from now: a replayed or delayed delivery`,
    );
  }
  const secret = base64Bytes(options.secret.replace(/^whsec_/, ''));
  if (!secret || secret.length === 0) throw new WebhookVerificationError('the secret is not a whsec_ secret');
  const key = await crypto.subtle.importKey(
    'raw',
    secret as BufferSource,
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['verify'],
  );
  const body =
    typeof options.body === 'string' ? new TextEncoder().encode(options.body) : new Uint8Array(options.body);
  const prefix = new TextEncoder().encode(`${id}.${timestamp}.`);
  const signed = new Uint8Array(prefix.length + body.length);
  signed.set(prefix);
  signed.set(body, prefix.length);
  for (const entry of signatures.split(' ')) {
    const [version, encoded] = entry.split(',', 2);
    const signature = version === 'v1' && encoded ? base64Bytes(encoded) : undefined;
    if (signature && (await crypto.subtle.verify('HMAC', key, signature as BufferSource, signed))) {
      return JSON.parse(new TextDecoder().decode(body)) as T;
    }
  }
  throw new WebhookVerificationError('no webhook-signature matches the body under this secret');
}
