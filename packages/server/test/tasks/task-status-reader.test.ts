import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOwner } from '../../src/auth/accounts.ts';
import { submitTask } from '../../src/tasks/index.ts';
import { TaskStatusReader } from '../../src/tasks/task-status-reader.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';

describe('batched status reads', () => {
  let db: TestDatabase;
  let alice: string;
  let bob: string;
  beforeAll(async () => {
    db = await createTestDatabase();
    alice = (await createOwner(db.pool, { name: 'alice', plan: 'FREE' })).owner.id;
    bob = (await createOwner(db.pool, { name: 'bob', plan: 'FREE' })).owner.id;
  });
  afterAll(() => db.drop());

  const submit = (ownerId: string) =>
    submitTask(db.pool, {
      ownerId,
      endpoint: '/sd/text2image/v1',
      kind: 'generation',
      input: { prompt: 'p' },
      publicUrl: 'http://api.test',
    });

  it('answers each owner only their own tasks when many owners share one statement', async () => {
    const reader = new TaskStatusReader(db.pool);
    const a = await submit(alice);
    const b = await submit(bob);
    let statements = 0;
    const counting = {
      query: (...args: Parameters<typeof db.pool.query>) => {
        statements++;
        return (db.pool.query as (...a: unknown[]) => unknown)(...args);
      },
    } as unknown as typeof db.pool;
    const batched = new TaskStatusReader(counting);
    const round = () => [
      batched.read(alice, a.id),
      batched.read(bob, b.id),
      batched.read(bob, a.id),
      batched.read(alice, b.id),
      batched.read(alice, a.id.toUpperCase()),
      batched.read(alice, 'not-a-uuid'),
      batched.read(alice, '7d9f1c9e-2a4b-4c1d-9e8f-0a1b2c3d4e5f'),
    ];
    const reads = await Promise.all([...round(), ...round(), ...round()]);
    const expected = [a.id, b.id, null, null, a.id, null, null];
    expect(reads.map((task) => task?.id ?? null)).toEqual([...expected, ...expected, ...expected]);
    // 18 reads that reach the database: the first few go at once, the rest share one statement.
    expect(statements).toBeLessThanOrEqual(4);
    expect((await reader.read(alice, a.id))?.ownerId).toBe(alice);
  });
});
