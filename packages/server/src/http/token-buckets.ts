/**
 * A token bucket per key (a client's address): each holds up to `capacity` tokens and refills
 * continuously at `perSecond`. A key not seen yet has a full bucket. The map keeps at most
 * `maxKeys` buckets, dropping the one used least recently, so a flood of new keys costs bounded
 * memory; a dropped bucket comes back full, which gives its key a fresh allowance and no more.
 */
export interface TokenBucketOptions {
  readonly capacity: number;
  readonly perSecond: number;
  /** Buckets kept at most (default 10,000). */
  readonly maxKeys?: number;
  /** Milliseconds, as Date.now (tests inject a clock). */
  readonly now?: () => number;
}

export class TokenBuckets {
  /** In order of last use, least recent first: Map keeps insertion order, and `take` re-inserts. */
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly maxKeys: number;
  private readonly now: () => number;

  constructor(private readonly o: TokenBucketOptions) {
    this.maxKeys = o.maxKeys ?? 10_000;
    this.now = o.now ?? Date.now;
  }

  /**
   * Takes `count` tokens from `key`'s bucket. Answers 0 when they were taken; otherwise takes
   * nothing and answers the milliseconds until the bucket would hold them.
   */
  take(key: string, count = 1): number {
    const { capacity, perSecond } = this.o;
    const now = this.now();
    const bucket = this.buckets.get(key);
    let tokens = capacity;
    if (bucket) {
      tokens = Math.min(capacity, bucket.tokens + ((now - bucket.at) / 1000) * perSecond);
      this.buckets.delete(key);
    }
    const taken = tokens >= count;
    this.buckets.set(key, { tokens: taken ? tokens - count : tokens, at: now });
    if (this.buckets.size > this.maxKeys) this.buckets.delete(this.buckets.keys().next().value as string);
    return taken ? 0 : Math.ceil(((count - tokens) / perSecond) * 1000);
  }

  /** Buckets held now. */
  get size(): number {
    return this.buckets.size;
  }
}
