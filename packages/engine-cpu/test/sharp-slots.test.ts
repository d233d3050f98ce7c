import { describe, expect, it } from 'vitest';
import { withSharpSlot } from '../src/sharp-slots.ts';

describe("the engine's share of libuv's thread pool", () => {
  it('runs at most half the pool’s threads of image operations at once, the rest in turn', async () => {
    let running = 0;
    let most = 0;
    const operation = () =>
      withSharpSlot(async () => {
        most = Math.max(most, ++running);
        await new Promise((resolve) => setTimeout(resolve, 20));
        running--;
        return running;
      });
    await Promise.all(Array.from({ length: 10 }, operation));
    // UV_THREADPOOL_SIZE is unset here: four threads, two for the engine.
    expect(most).toBe(2);
    // A failed operation gives its slot back.
    await expect(withSharpSlot(() => Promise.reject(new Error('bad image')))).rejects.toThrow('bad image');
    await Promise.all(Array.from({ length: 4 }, operation));
    expect(most).toBe(2);
  });
});
