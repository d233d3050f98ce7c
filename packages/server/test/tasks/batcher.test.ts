import { describe, expect, it } from 'vitest';
import { Batcher, type Pending } from '../../src/tasks/batcher.ts';

/** A batcher whose batches wait until the test releases them, recording each batch's items. */
function gated(options: { lanes: number; maxBatch: number }) {
  const batches: number[][] = [];
  const gates: (() => void)[] = [];
  const batcher = new Batcher<number, string>({
    ...options,
    async run(batch: Pending<number, string>[]) {
      batches.push(batch.map((pending) => pending.item));
      await new Promise<void>((resolve) => gates.push(resolve));
      for (const pending of batch) pending.resolve(`answer ${pending.item}`);
    },
  });
  /** Releases the batches in order as they start, until every answer has come. */
  const releaseAll = async (answers: Promise<string>[]) => {
    let done = false;
    const all = Promise.all(answers).finally(() => {
      done = true;
    });
    while (!done) {
      gates.shift()?.();
      await new Promise((resolve) => setImmediate(resolve));
    }
    return all;
  };
  return { batcher, batches, gates, releaseAll };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('the batcher', () => {
  it('sends a lone call at once, in a batch of its own, and answers it', async () => {
    const { batcher, batches, releaseAll } = gated({ lanes: 2, maxBatch: 10 });
    const answer = batcher.add(7);
    await turn();
    expect(batches).toEqual([[7]]);
    expect(await releaseAll([answer])).toEqual(['answer 7']);
  });

  it('gathers the calls of one event-loop turn into one batch', async () => {
    const { batcher, batches, releaseAll } = gated({ lanes: 2, maxBatch: 10 });
    const answers = [1, 2, 3].map((n) => batcher.add(n));
    await turn();
    expect(batches).toEqual([[1, 2, 3]]);
    expect(await releaseAll(answers)).toEqual(['answer 1', 'answer 2', 'answer 3']);
  });

  it('keeps at most `lanes` batches in flight; what arrives meanwhile goes together next', async () => {
    const { batcher, batches, gates, releaseAll } = gated({ lanes: 2, maxBatch: 10 });
    const answers = [batcher.add(1)];
    await turn();
    answers.push(batcher.add(2));
    await turn();
    expect(batches).toEqual([[1], [2]]);
    answers.push(batcher.add(3), batcher.add(4));
    await turn();
    answers.push(batcher.add(5));
    await turn();
    // Both lanes are busy: 3, 4 and 5 wait, and go as one batch once a lane is free.
    expect(batches).toHaveLength(2);
    expect(gates).toHaveLength(2);
    expect(await releaseAll(answers)).toEqual([1, 2, 3, 4, 5].map((n) => `answer ${n}`));
    expect(batches).toEqual([[1], [2], [3, 4, 5]]);
  });

  it('caps a batch at maxBatch items', async () => {
    const { batcher, batches, releaseAll } = gated({ lanes: 1, maxBatch: 2 });
    const answers = [1, 2, 3, 4, 5].map((n) => batcher.add(n));
    await releaseAll(answers);
    expect(batches).toEqual([[1, 2], [3, 4], [5]]);
  });

  it("rejects a failed batch's unanswered calls with its error, and goes on with the next", async () => {
    let runs = 0;
    const batcher = new Batcher<number, number>({
      lanes: 1,
      maxBatch: 2,
      async run(batch) {
        runs++;
        if (runs === 1) {
          batch[0]!.resolve(10);
          throw new Error('statement failed');
        }
        for (const pending of batch) pending.resolve(pending.item * 10);
      },
    });
    const answers = [1, 2, 3].map((n) => batcher.add(n).then(String, (error: Error) => error.message));
    expect(await Promise.all(answers)).toEqual(['10', 'statement failed', '30']);
  });
});
