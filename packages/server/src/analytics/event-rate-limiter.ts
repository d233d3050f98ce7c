/**
 * A token bucket per client address: `perMinute` events, refilled continuously. Buckets of quiet
 * clients are dropped so the map stays bounded by the clients of the last few minutes.
 */
export class EventRateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private lastSweep = 0;

  constructor(
    private readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Takes `count` tokens for `key`; false when the client is over its rate. */
  take(key: string, count: number): boolean {
    const now = this.now();
    this.sweep(now);
    const bucket = this.buckets.get(key) ?? { tokens: this.perMinute, at: now };
    bucket.tokens = Math.min(this.perMinute, bucket.tokens + ((now - bucket.at) / 60_000) * this.perMinute);
    bucket.at = now;
    this.buckets.set(key, bucket);
    if (bucket.tokens < count) return false;
    bucket.tokens -= count;
    return true;
  }

  private sweep(now: number) {
    if (now - this.lastSweep < 60_000) return;
    this.lastSweep = now;
    for (const [key, bucket] of this.buckets) {
      if (now - bucket.at > 5 * 60_000) this.buckets.delete(key);
    }
  }
}
