import { listen, type Pool } from '@imagegen/db';
import type { AddressPolicy } from '../fetch/address-policy.ts';
import { GuardError, guardedFetch, type Resolver } from '../fetch/ssrf-guard.ts';
import type { LineLog, LogFields } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { DEFAULT_RETRY_POLICY, type RetryPolicy, retryDelayMs } from './retry-schedule.ts';
import { type ClaimedDelivery, claimDueDeliveries } from './sql/claimDueDeliveries.ts';
import { finishAttempt } from './sql/finishAttempt.ts';
import { messageIdOf, signWebhook } from './webhook-signing.ts';

export interface WebhookDispatcherOptions extends AddressPolicy {
  readonly pool: Pool;
  /** Aborting it stops claiming; attempts in flight finish (bounded by timeoutMs). */
  readonly signal: AbortSignal;
  readonly retry?: RetryPolicy;
  /** One attempt, connect to last byte (default 15 s). */
  readonly timeoutMs?: number;
  /** Deliveries attempted at once (default 8). */
  readonly concurrency?: number;
  /** Poll interval when no notification arrives (default 1 s): retries fall due without one. */
  readonly pollMs?: number;
  /** DNS for receivers' names (tests inject one). */
  readonly resolve?: Resolver;
  readonly userAgent?: string;
  /** Its lines about a delivery carry the task's id and request id as fields. */
  readonly log?: LineLog;
  /** Where it counts attempts by outcome (default: not counted). */
  readonly metrics?: Metrics;
}

export interface WebhookDispatcher {
  /** Resolves once the dispatcher has stopped and its attempts in flight are recorded. */
  readonly stopped: Promise<void>;
}

const CHANNEL = 'imagegen_webhooks';
const EXCERPT_BYTES = 1024;

/** Standard Webhooks' answer for "stop sending": the receiver wants no more deliveries. */
const GONE = 410;

/**
 * Delivers the outbox. Each attempt is a signed POST through the SSRF guard (the receiver's
 * address is checked after DNS, no redirects followed); a 2xx answer delivers, and any other
 * outcome is recorded. Several dispatchers (one per API or worker process) can share one outbox.
 *
 * Two failures end a delivery at once, because no later attempt can succeed (README and the
 * docs' Getting started say the same):
 *
 * - a refusal of the guard that is not transient: an address that is not public (private,
 *   loopback, link-local..., also when the name resolves to one), a scheme other than http(s),
 *   credentials in the URL, a URL that does not parse. The same URL is refused the same way on
 *   every attempt; the guard's reason is the attempt's error.
 * - `410 Gone`, the receiver asking for no more deliveries.
 *
 * Everything else is retried on the backoff schedule until it runs out: timeouts, refused or
 * reset connections, failed DNS lookups, TLS errors, and every other status (3xx, 4xx, 429, 5xx).
 * As Svix does and the Standard Webhooks spec suggests, a 400, 401, 403 or 404 counts as a
 * receiver that is misconfigured for now (a deploy in progress, a secret being rotated, a route
 * not yet added): the schedule is there to let it recover without losing the event.
 */
export function startWebhookDispatcher(options: WebhookDispatcherOptions): WebhookDispatcher {
  const dispatcher = new Dispatcher(options);
  return { stopped: dispatcher.run() };
}

class Dispatcher {
  private wakeUp: (() => void) | null = null;
  /** A wake-up that came while nobody slept (during a claim): the next sleep returns at once. */
  private woken = false;
  private readonly retry: RetryPolicy;
  private readonly timeoutMs: number;

  constructor(private readonly o: WebhookDispatcherOptions) {
    this.retry = o.retry ?? DEFAULT_RETRY_POLICY;
    this.timeoutMs = o.timeoutMs ?? 15_000;
  }

  async run(): Promise<void> {
    const { signal } = this.o;
    const onAbort = () => this.wake();
    signal.addEventListener('abort', onAbort, { once: true });
    const inFlight = new Set<Promise<void>>();
    const concurrency = this.o.concurrency ?? 8;
    // New deliveries wake the loop at once; if the connection is lost, polling carries on meanwhile.
    const listener = await listen(
      this.o.pool,
      CHANNEL,
      () => this.wake(),
      (line) => this.log(`webhooks: ${line}`),
    );
    try {
      while (!signal.aborted) {
        const free = concurrency - inFlight.size;
        const claimed =
          free > 0
            ? await claimDueDeliveries(this.o.pool, {
                limit: free,
                // The lease outlives the attempt's own timeout, so a live attempt is never
                // claimed twice.
                leaseMs: this.timeoutMs + 30_000,
              }).catch((error: unknown) => {
                this.log(`webhook claim failed: ${(error as Error).message}`);
                return [];
              })
            : [];
        for (const delivery of claimed) {
          const attempt: Promise<void> = this.attempt(delivery)
            .catch((error: unknown) =>
              this.log(`webhook ${delivery.id}: ${(error as Error).message}`, deliveryFields(delivery)),
            )
            .finally(() => {
              inFlight.delete(attempt);
              this.wake();
            });
          inFlight.add(attempt);
        }
        if (claimed.length === 0 || inFlight.size >= concurrency) await this.sleep();
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      await Promise.all(inFlight);
      await listener.close();
    }
  }

  private async attempt(delivery: ClaimedDelivery): Promise<void> {
    const startedAt = new Date();
    const headers = signWebhook(
      delivery.webhook_secret,
      messageIdOf(delivery.id),
      startedAt,
      delivery.payload,
    );
    let statusCode: number | null = null;
    let error: string | null = null;
    /** No later attempt can succeed: the delivery fails now instead of being retried. */
    let final = false;
    let excerpt: string | null = null;
    try {
      const response = await guardedFetch(
        delivery.url,
        {
          method: 'POST',
          headers: {
            ...headers,
            'content-type': 'application/json',
            'user-agent': this.o.userAgent ?? 'imagegen-webhooks/1.0',
          },
          body: delivery.payload,
          maxRedirects: 0,
          maxBytes: EXCERPT_BYTES,
          truncateBody: true,
        },
        {
          ...(this.o.allowPrivate !== undefined && { allowPrivate: this.o.allowPrivate }),
          ...(this.o.allowedRanges && { allowedRanges: this.o.allowedRanges }),
          ...(this.o.resolve && { resolve: this.o.resolve }),
          totalTimeoutMs: this.timeoutMs,
        },
      );
      statusCode = response.status;
      excerpt = response.body.toString('utf8');
      if (statusCode < 200 || statusCode > 299) {
        error = `receiver answered HTTP ${statusCode}`;
        final = statusCode === GONE;
      }
    } catch (caught) {
      error = caught instanceof GuardError ? caught.message : `request failed: ${(caught as Error).message}`;
      final = caught instanceof GuardError && !caught.transient;
    }
    const delayMs = error === null || final ? null : retryDelayMs(this.retry, delivery.attempts);
    await finishAttempt(this.o.pool, {
      deliveryId: delivery.id,
      ownerId: delivery.owner_id,
      attempt: delivery.attempts,
      startedAt,
      durationMs: Date.now() - startedAt.getTime(),
      statusCode,
      error,
      responseExcerpt: excerpt,
      next:
        error === null
          ? { state: 'delivered' }
          : delayMs === null
            ? { state: 'failed' }
            : { state: 'pending', delayMs },
    });
    const outcome = error === null ? 'delivered' : delayMs === null ? 'failed' : 'retry';
    this.o.metrics?.webhookAttempts.inc({ outcome });
    if (error === null) {
      this.log('webhook delivered', { ...deliveryFields(delivery), level: 'info', status: statusCode });
    } else {
      this.log(
        `webhook ${delivery.id} attempt ${delivery.attempts}: ${error}` +
          (final
            ? '; not retried'
            : delayMs === null
              ? '; giving up'
              : `; next in ${Math.round(delayMs / 1000)} s`),
        { ...deliveryFields(delivery), status: statusCode },
      );
    }
  }

  private sleep(): Promise<void> {
    if (this.o.signal.aborted || this.woken) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(done, this.o.pollMs ?? 1_000);
      this.wakeUp = done;
      function done() {
        clearTimeout(timer);
        resolve();
      }
    });
  }

  private wake(): void {
    const wakeUp = this.wakeUp;
    this.wakeUp = null;
    if (wakeUp) wakeUp();
    else this.woken = true;
  }

  private log(line: string, fields?: LogFields): void {
    this.o.log?.(line, fields);
  }
}

/** The fields of a log line about a delivery: never its URL (a query may hold a token) or secret. */
function deliveryFields(delivery: ClaimedDelivery): LogFields {
  return {
    deliveryId: delivery.id,
    taskId: delivery.task_id,
    requestId: delivery.request_id,
    attempt: delivery.attempts,
  };
}
