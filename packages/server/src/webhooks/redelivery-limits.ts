/**
 * How often an owner may send a webhook again (POST /webhooks/v1/deliveries/{id}/redeliver):
 * past either allowance the answer is 429 with Retry-After. Every redelivery is a signed POST to
 * a URL the owner chose, so without them one key could make the dispatcher post as fast as it
 * asks (8,496 redeliveries in 60 s were seen), and each attempt is a row kept for days.
 */
export interface RedeliveryLimits {
  /** WEBHOOK_REDELIVERIES_PER_DELIVERY: redeliveries of one delivery in any 24 hours. */
  readonly perDelivery: number;
  /** WEBHOOK_REDELIVERIES_PER_MINUTE: redeliveries of one owner's deliveries in any minute. */
  readonly perMinute: number;
}

/** Plenty to debug a receiver by hand, far too few to flood one. */
export const DEFAULT_REDELIVERY_LIMITS: RedeliveryLimits = { perDelivery: 10, perMinute: 20 };

/** Reads the two settings (whole numbers, at least 1); a wrong value stops the start, naming it. */
export function redeliveryLimitsFromEnv(env: Readonly<Record<string, string | undefined>>): RedeliveryLimits {
  const read = (name: string, fallback: number) => {
    const text = env[name]?.trim();
    if (!text) return fallback;
    if (!/^\d{1,9}$/.test(text) || Number(text) < 1) {
      throw new Error(`${name}: "${env[name]}" is not a whole number from 1 to 999999999`);
    }
    return Number(text);
  };
  return {
    perDelivery: read('WEBHOOK_REDELIVERIES_PER_DELIVERY', DEFAULT_REDELIVERY_LIMITS.perDelivery),
    perMinute: read('WEBHOOK_REDELIVERIES_PER_MINUTE', DEFAULT_REDELIVERY_LIMITS.perMinute),
  };
}
