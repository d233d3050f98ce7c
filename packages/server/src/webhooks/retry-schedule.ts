/**
 * When a failed delivery is tried again: exponential backoff, doubling from 5 seconds up to a
 * 4-hour ceiling, for 18 attempts, which spans a little over 25 hours. A receiver that is down
 * for a day still gets its events, and Standard Webhooks receivers expect about that much. A
 * failure no later attempt can mend (a refused URL, 410 Gone) is not retried at all: see
 * webhook-dispatcher.ts.
 */
export interface RetryPolicy {
  readonly firstDelayMs: number;
  readonly factor: number;
  readonly maxDelayMs: number;
  /** Attempts in all, the first included. */
  readonly maxAttempts: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  firstDelayMs: 5_000,
  factor: 2,
  maxDelayMs: 4 * 60 * 60 * 1000,
  maxAttempts: 18,
};

/** Delay after failed attempt `attempt` (1-based), or null when that was the last attempt. */
export function retryDelayMs(policy: RetryPolicy, attempt: number): number | null {
  if (attempt >= policy.maxAttempts) return null;
  return Math.min(policy.firstDelayMs * policy.factor ** (attempt - 1), policy.maxDelayMs);
}

/** From the first attempt to the last, if every attempt fails. */
export function retrySpanMs(policy: RetryPolicy): number {
  let total = 0;
  for (let attempt = 1; attempt < policy.maxAttempts; attempt++) total += retryDelayMs(policy, attempt) ?? 0;
  return total;
}
