import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOwner } from '../../src/auth/accounts.ts';
import { helpText, runCommand } from '../../src/cli/commands.ts';
import { failTask } from '../../src/tasks/sql/failTask.ts';
import { reclaimExpired } from '../../src/tasks/sql/reclaimExpired.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';

/** The operator's commands for tasks that failed: listing them with every attempt's error, requeueing. */

const TEXT2IMAGE = '/sd/text2image/v1';

describe('the tasks commands', () => {
  let db: TestDatabase;
  let ownerId: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    ownerId = (await createOwner(db.pool, { name: 'ops', plan: 'FREE' })).owner.id;
  });
  afterAll(() => db.drop());

  /** A queued task of this pipeline and kind. */
  async function queued(endpoint = TEXT2IMAGE, kind = 'generation', maxAttempts = 2): Promise<string> {
    const result = await db.pool.query<{ id: string }>(
      `INSERT INTO tasks (owner_id, endpoint, kind, input, max_attempts)
       VALUES ($1, $2, $3, '{"prompt":"a cat"}', $4) RETURNING id`,
      [ownerId, endpoint, kind, maxAttempts],
    );
    return result.rows[0]!.id;
  }

  /** The claim's effect on one task (another attempt under a lease), without the claim's choice. */
  async function claim(id: string, lease: string, leaseMs = 60_000): Promise<void> {
    await db.pool.query(
      `UPDATE tasks SET state = 'running', attempts = attempts + 1, lease_owner = $2,
         lease_expires_at = now() + make_interval(secs => $3::double precision / 1000), started_at = now()
       WHERE id = $1`,
      [id, lease, leaseMs],
    );
  }

  /** Runs a task through its attempts, each failing with the next error. */
  async function failEvery(id: string, errors: string[]): Promise<void> {
    for (const [n, error] of errors.entries()) {
      await claim(id, `w-${n}`);
      await failTask(db.pool, { id, leaseOwner: `w-${n}`, error, final: false, backoffMs: 0 });
    }
  }

  const state = async (id: string) =>
    (
      await db.pool.query<{ state: string; attempts: number }>(
        'SELECT state, attempts FROM tasks WHERE id = $1',
        [id],
      )
    ).rows[0]!;

  it("lists a task that failed its last attempt with every attempt's error, an expired lease's too", async () => {
    const id = await queued(TEXT2IMAGE, 'generation', 3);
    await failEvery(id, ['engine error: out of memory', 'engine error: prompt stalled']);
    // The third worker dies: its lease expires and the reclaim fails the task for good.
    await claim(id, 'w-dead', 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    await reclaimExpired(db.pool);
    expect((await state(id)).state).toBe('failed');

    const out = await runCommand(db.pool, ['tasks', 'failed'], {});
    const listed = (out.json as { id: string; attempt_errors: { attempt: number; error: string }[] }[]).find(
      (task) => task.id === id,
    );
    expect(listed?.attempt_errors.map(({ attempt, error }) => ({ attempt, error }))).toEqual([
      { attempt: 1, error: 'engine error: out of memory' },
      { attempt: 2, error: 'engine error: prompt stalled' },
      { attempt: 3, error: 'the worker running attempt 3 stopped responding (lease expired)' },
    ]);
    expect(out.text).toContain(`${id}  ${TEXT2IMAGE}  failed `);
    expect(out.text).toContain('  attempt 2: engine error: prompt stalled');
  });

  it('leaves out tasks still being retried, cancelled ones, other pipelines, and those before --since', async () => {
    const retrying = await queued();
    await failEvery(retrying, ['engine error: once']);
    expect((await state(retrying)).state).toBe('queued');
    const cancelled = await queued();
    await db.pool.query(
      `UPDATE tasks SET state = 'failed', cancelled_at = now(), finished_at = now(), error = 'cancelled' WHERE id = $1`,
      [cancelled],
    );
    const other = await queued('/sd/image2image/v1');
    await failEvery(other, ['a', 'b']);
    const old = await queued();
    await failEvery(old, ['a', 'b']);
    await db.pool.query(`UPDATE tasks SET finished_at = now() - interval '2 days' WHERE id = $1`, [old]);

    const ids = async (options: Record<string, string>) =>
      ((await runCommand(db.pool, ['tasks', 'failed'], options)).json as { id: string }[]).map((t) => t.id);
    const all = await ids({});
    expect(all).toContain(other);
    expect(all).toContain(old);
    expect(all).not.toContain(retrying);
    expect(all).not.toContain(cancelled);
    expect(await ids({ pipeline: TEXT2IMAGE })).not.toContain(other);
    expect(await ids({ since: '24h' })).not.toContain(old);
    await expect(runCommand(db.pool, ['tasks', 'failed'], { since: 'yesterday' })).rejects.toThrow(
      '--since yesterday is neither 30m, 24h, 7d nor an ISO date',
    );
  });

  it('requeues the failed generation tasks it is given, with fresh attempts and their errors kept', async () => {
    const failed = await queued();
    await failEvery(failed, ['a', 'b']);
    const running = await queued();
    await claim(running, 'w-live');
    const model = await queued('/load_model/v1', 'load_model');
    await failEvery(model, ['a', 'b']);

    const out = await runCommand(db.pool, ['tasks', 'requeue', failed, running, model], {});
    expect(out.json).toEqual({ requeued: [failed], not_requeued: [running, model] });
    expect(out.text).toBe(
      `requeued 1 task(s)\nnot requeued (no such task, not failed, cancelled, or a model task): ${running}, ${model}`,
    );
    expect(await state(failed)).toEqual({ state: 'queued', attempts: 0 });
    expect((await state(running)).state).toBe('running');
    const row = await db.pool.query<{ error: string | null; attempt_errors: unknown[] }>(
      'SELECT error, attempt_errors FROM tasks WHERE id = $1',
      [failed],
    );
    expect(row.rows[0]!.error).toBeNull();
    expect(row.rows[0]!.attempt_errors).toHaveLength(2);
    // Requeued, it is no failed task any more.
    const listed = (await runCommand(db.pool, ['tasks', 'failed'], {})).json as { id: string }[];
    expect(listed.map((t) => t.id)).not.toContain(failed);

    await expect(runCommand(db.pool, ['tasks', 'requeue'], {})).rejects.toThrow('takes the ids');
    await expect(runCommand(db.pool, ['tasks', 'requeue', 'nope'], {})).rejects.toThrow(
      'not a task id: nope',
    );
  });

  it('is in the help', () => {
    expect(helpText(['tasks'])).toContain('tasks requeue TASK_ID...');
    expect(helpText(['tasks', 'failed'])).toContain('every attempt');
  });
});
