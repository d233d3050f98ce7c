import { describe, expect, it } from 'vitest';
import { TokenBuckets } from '../../src/http/token-buckets.ts';

describe('token buckets per key', () => {
  it('allow a burst, then answer how long until the next token, taking nothing meanwhile', () => {
    let now = 0;
    const buckets = new TokenBuckets({ capacity: 3, perSecond: 4, now: () => now });
    expect([buckets.take('a'), buckets.take('a'), buckets.take('a')]).toEqual([0, 0, 0]);
    expect(buckets.take('a')).toBe(250);
    now += 100;
    expect(buckets.take('a')).toBe(150);
    now += 150;
    expect(buckets.take('a')).toBe(0);
    expect(buckets.take('b', 3)).toBe(0);
  });

  it('refill up to their capacity and no further', () => {
    let now = 0;
    const buckets = new TokenBuckets({ capacity: 2, perSecond: 1, now: () => now });
    buckets.take('a', 2);
    now += 60_000;
    expect(buckets.take('a', 2)).toBe(0);
    expect(buckets.take('a')).toBe(1000);
  });

  it('keep at most maxKeys buckets however many keys come, dropping the least recently used', () => {
    let now = 0;
    const buckets = new TokenBuckets({ capacity: 1, perSecond: 0.001, maxKeys: 100, now: () => now });
    buckets.take('busy');
    let most = 0;
    for (let n = 0; n < 10_000; n++) {
      now++;
      buckets.take(`flood-${n}`);
      if (n % 50 === 0) buckets.take('busy'); // in use: never the least recent
      most = Math.max(most, buckets.size);
    }
    expect(most).toBe(100);
    expect(buckets.take('busy')).toBeGreaterThan(0);
    // A key dropped long ago comes back with a full bucket.
    expect(buckets.take('flood-0')).toBe(0);
  });
});
