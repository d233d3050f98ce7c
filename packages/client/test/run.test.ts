import { freePort } from '@imagegen/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApiError,
  AuthError,
  createClient,
  NetworkError,
  type PendingOf,
  TaskFailedError,
  type TaskPreview,
  TimeoutError,
  ValidationError,
} from '../src/index.ts';
import { recordingFetch } from './support/recording-fetch.ts';
import { startTestApi, type TestApi } from './support/test-api.ts';

/**
 * `run` against the real API (sandbox engine, 1.5 s of simulated work per task): it follows the
 * task through its status stream, falls back to polling where there is none, and answers every
 * failure as its own error type.
 */

let api: TestApi;
const prompt = { prompt: 'a lighthouse at dawn', negative_prompt: 'blurry' };

beforeAll(async () => {
  api = await startTestApi({ delayMs: 1500 });
});

afterAll(async () => {
  await api?.close();
});

describe('run', () => {
  it('follows the task through its status stream, reporting progress, to its outputs', async () => {
    const { fetch, seen } = recordingFetch();
    const client = createClient({ apiKey: api.key, baseUrl: api.url, fetch });
    const progress: PendingOf<'/sd/text2image/v1'>[] = [];
    const result = await client.run(
      '/sd/text2image/v1',
      { ...prompt, samples: 3, width: 64, height: 64 },
      { onProgress: (status) => progress.push(status), timeoutMs: 30_000 },
    );
    expect(result.status).toBe('SUCCESS');
    expect(result.download_urls).toHaveLength(3);
    const fractions = progress.map((status) => status.progress).filter((p) => p !== undefined);
    expect(fractions.length).toBeGreaterThan(0);
    expect(fractions.every((p) => p > 0 && p < 1)).toBe(true);
    expect(fractions).toEqual([...fractions].sort());
    // One submission, one stream, no polling.
    expect(seen.filter((line) => line.startsWith('POST'))).toEqual(['POST /sd/text2image/v1']);
    expect(seen.filter((line) => line.includes('/status/'))).toHaveLength(1);
    expect(seen.find((line) => line.includes('/status/'))).toMatch(/\/events$/);
  });

  it("passes on the task's previews when asked, and asks for none otherwise", async () => {
    const previewing = await startTestApi({ delayMs: 1500, previews: true });
    try {
      const streams: string[] = [];
      const { fetch } = recordingFetch((_method, url) => {
        if (url.pathname.endsWith('/events')) streams.push(url.search);
        return undefined;
      });
      const client = createClient({ apiKey: previewing.key, baseUrl: previewing.url, fetch });
      const previews: TaskPreview[] = [];
      const result = await client.run(
        '/sd/text2image/v1',
        { ...prompt, samples: 3, width: 64, height: 64 },
        { onPreview: (preview) => previews.push(preview), timeoutMs: 30_000 },
      );
      expect(result.status).toBe('SUCCESS');
      expect(previews.length).toBeGreaterThan(0);
      for (const preview of previews) {
        expect(preview.content_type).toBe('image/jpeg');
        expect([...Buffer.from(preview.image, 'base64').subarray(0, 2)]).toEqual([0xff, 0xd8]);
      }
      // Without onPreview the stream is asked for statuses only, and statuses are all it gives.
      const plain = await client.run('/sd/text2image/v1', { ...prompt, width: 64, height: 64 });
      expect(plain.status).toBe('SUCCESS');
      expect(streams).toEqual(['?previews=true', '']);
    } finally {
      await previewing.close();
    }
  });

  it('polls the status path when the API offers no status stream', async () => {
    const { fetch, seen } = recordingFetch((_, url) =>
      url.pathname.endsWith('/events') ? Response.json({ detail: 'Not Found' }, { status: 404 }) : undefined,
    );
    const client = createClient({ apiKey: api.key, baseUrl: api.url, fetch });
    const result = await client.run(
      '/sd/text2image/v1',
      { ...prompt, width: 64, height: 64 },
      {
        pollIntervalMs: 200,
      },
    );
    expect(result.download_urls).toHaveLength(1);
    const polls = seen.filter((line) => /\/status\/[^/]+$/.test(line));
    expect(polls.length).toBeGreaterThan(1);
  });

  it('answers a body the contract refuses with a ValidationError that lists the problem', async () => {
    const client = createClient({ apiKey: api.key, baseUrl: api.url });
    // A value of type number: a literal 9 would not compile (samples is at most 4).
    const samples: number = 9;
    const error = await client.run('/sd/text2image/v1', { ...prompt, samples }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    const issues = (error as ValidationError).issues;
    expect(issues.map((issue) => issue.loc)).toEqual([['body', 'samples']]);
    expect((error as ValidationError).message).toContain(
      'body.samples: ensure this value is less than or equal to 4',
    );
  });

  it('answers an unknown key with an AuthError', async () => {
    const client = createClient({ apiKey: 'not-a-key', baseUrl: api.url });
    const error = await client.run('/sd/text2image/v1', prompt).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthError);
    expect((error as AuthError).status).toBe(401);
  });

  it('answers an API it cannot reach with a NetworkError, after its retries', async () => {
    const { fetch, seen } = recordingFetch();
    // A port that was free a moment ago: nothing listens there.
    const baseUrl = `http://127.0.0.1:${await freePort()}`;
    const client = createClient({ apiKey: api.key, baseUrl, fetch, retryDelayMs: 10 });
    const error = await client.run('/sd/text2image/v1', prompt).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect(seen).toHaveLength(4);
  });

  it('answers a task that fails with a TaskFailedError carrying its error', async () => {
    const client = createClient({ apiKey: api.key, baseUrl: api.url });
    const error = await client
      .run('/sd/image2image/v1', { ...prompt, init_image: `${api.imagesUrl}/missing.png` })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TaskFailedError);
    const failed = error as TaskFailedError;
    expect(failed.status.status).toBe('FAILURE');
    expect(failed.message).toBe(failed.status.error);
    expect(failed.message).toMatch(/init_image/);
    const status = await client.status('/sd/image2image/v1', failed.taskId);
    expect(status).toEqual(failed.status);
  });

  it('sends cancelAfter as Cancel-After: the API fails the task at that deadline', async () => {
    const client = createClient({ apiKey: api.key, baseUrl: api.url });
    // The engine works 1.5 s; the task's deadline is 1 s after its submission.
    const error = await client
      .run('/sd/text2image/v1', prompt, { cancelAfter: '1s', timeoutMs: 30_000 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TaskFailedError);
    expect((error as TaskFailedError).message).toBe("the task's deadline (Cancel-After: 1s) passed");
    const { rows } = await api.db.pool.query('SELECT cancel_after FROM tasks WHERE id = $1', [
      (error as TaskFailedError).taskId,
    ]);
    expect(rows).toEqual([{ cancel_after: '1s' }]);
  });

  it('answers a Cancel-After the API refuses with a ValidationError at the header, and submit sends it too', async () => {
    const client = createClient({ apiKey: api.key, baseUrl: api.url });
    const error = await client
      .run('/sd/text2image/v1', prompt, { cancelAfter: '25h' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).issues.map((issue) => issue.loc)).toEqual([['header', 'cancel-after']]);
    const { id } = await client.submit('/sd/text2image/v1', prompt, { cancelAfter: '1h30m' });
    const { rows } = await api.db.pool.query(
      'SELECT cancel_after, extract(epoch FROM deadline_at - created_at)::int AS seconds FROM tasks WHERE id = $1',
      [id],
    );
    expect(rows).toEqual([{ cancel_after: '1h30m', seconds: 5400 }]);
    // @ts-expect-error: a duration has a unit
    await client.submit('/sd/text2image/v1', prompt, { cancelAfter: '30' }).catch(() => {});
  });

  it('rejects with a TimeoutError at the deadline and leaves the task running', async () => {
    const client = createClient({ apiKey: api.key, baseUrl: api.url });
    const error = await client.run('/sd/text2image/v1', prompt, { timeoutMs: 300 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    const timeout = error as TimeoutError;
    expect(timeout.cancelled).toBe(false);
    expect(timeout.taskId).toBeDefined();
    const final = await client.wait('/sd/text2image/v1', timeout.taskId!, { timeoutMs: 30_000 });
    expect(final.status).toBe('SUCCESS');
  });

  it('cancels the task at the deadline when asked', async () => {
    const client = createClient({ apiKey: api.key, baseUrl: api.url });
    const error = await client
      // The deadline passes while the engine works (1.5 s): late enough that a busy machine has
      // answered the submission by then, early enough that the task is still running.
      .run('/sd/text2image/v1', prompt, { timeoutMs: 800, cancelOnTimeout: true })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    const timeout = error as TimeoutError;
    expect(timeout.cancelled).toBe(true);
    expect(await client.status('/sd/text2image/v1', timeout.taskId!)).toEqual({
      status: 'FAILURE',
      error: 'cancelled by the caller',
    });
  });

  it('cancels the task when its signal aborts, if asked, and rejects with the abort reason', async () => {
    const client = createClient({ apiKey: api.key, baseUrl: api.url });
    const stop = new AbortController();
    const run = client.run('/sd/text2image/v1', prompt, {
      signal: stop.signal,
      cancelOnAbort: true,
      onProgress: () => stop.abort(new Error('the user left')),
    });
    const error = await run.catch((e: unknown) => e);
    expect((error as Error).message).toBe('the user left');
    const [latest] = (await client.tasks({ limit: 1 })).tasks;
    expect(latest?.state).toBe('cancelled');
    expect(await client.status('/sd/text2image/v1', latest!.id)).toMatchObject({
      error: 'cancelled by the caller',
    });
  });

  it('answers 409 as an ApiError when cancelling a task that already ended', async () => {
    const client = createClient({ apiKey: api.key, baseUrl: api.url });
    const accepted = await client.submit('/sd/text2image/v1', { ...prompt, width: 64, height: 64 });
    await client.wait('/sd/text2image/v1', accepted.id);
    const error = await client.cancel('/sd/text2image/v1', accepted.id).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(409);
  });
});
