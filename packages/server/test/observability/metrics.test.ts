import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Metrics } from '../../src/observability/metrics.ts';
import { type ApiHarness, startApiHarness } from '../support/api-harness.ts';

const TEXT2IMAGE = '/sd/text2image/v1';

/** The sample lines of an exposition (no comments), e.g. `name{label="x"} 3`. */
function samples(text: string): string[] {
  return text.split('\n').filter((line) => line !== '' && !line.startsWith('#'));
}

/** The value of the one sample whose line starts with `series` (name and labels as written). */
function sampleValue(text: string, series: string): number | undefined {
  const line = samples(text).find((sample) => sample.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** Metrics whose queue reading answers these rows (given the reading's number), counting the readings. */
/**
 * Metrics over a stand-in database: `answer` gives the queue's rows (counted as readings), `backlog`
 * the webhook outbox's row.
 */
function watching(
  answer: (read: number) => Promise<unknown[]>,
  backlog = { pending: 0, oldest_seconds: 0 },
): { metrics: Metrics; reads: () => number } {
  let reads = 0;
  const metrics = new Metrics();
  metrics.watchQueue({
    query: async (statement: { name: string }) =>
      statement.name === 'getWebhookBacklog' ? { rows: [backlog] } : { rows: await answer(++reads) },
  } as never);
  return { metrics, reads: () => reads };
}

describe('GET /metrics on the API', () => {
  let api: ApiHarness;
  const metrics = new Metrics();

  beforeAll(async () => {
    api = await startApiHarness({ metrics });
  });
  afterAll(() => api.close());

  const scrape = async () => {
    const response = await api.request('GET', '/metrics', { key: null });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/plain');
    return response.bytes.toString('utf8');
  };

  it('counts a task from submission to success, with the engine run time, by pipeline and engine', async () => {
    const submitted = await api.request('POST', TEXT2IMAGE, { json: api.example(TEXT2IMAGE) });
    expect(submitted.status).toBe(200);
    const id = (submitted.body as { id: string }).id;
    expect((await api.settle(`${TEXT2IMAGE}/status/${id}`, api.alice.key)).status).toBe('SUCCESS');

    const text = await scrape();
    const labels = `pipeline="${TEXT2IMAGE}",engine="plain"`;
    expect(sampleValue(text, `imagegen_tasks_submitted_total{pipeline="${TEXT2IMAGE}"}`)).toBe(1);
    expect(sampleValue(text, `imagegen_tasks_claimed_total{${labels}}`)).toBe(1);
    expect(sampleValue(text, `imagegen_tasks_succeeded_total{${labels}}`)).toBe(1);
    expect(sampleValue(text, `imagegen_engine_run_seconds_count{${labels}}`)).toBe(1);
    // The requests so far, by route pattern and status: the poll's pattern names no task id.
    expect(
      sampleValue(
        text,
        `imagegen_http_request_duration_seconds_count{method="POST",route="${TEXT2IMAGE}",status="200"}`,
      ),
    ).toBe(1);
    expect(text).toContain(`route="${TEXT2IMAGE}/status/:task_id",status="200"`);
    expect(text).not.toContain(id);
  });

  it('keeps the series count bounded: 1,000 task ids and 1,000 bad paths add no series', async () => {
    const poll = (id: string) => api.request('GET', `${TEXT2IMAGE}/status/${id}`);
    const badPath = (n: number) => api.request('GET', `/no/such/path/${n}-${randomUUID()}`, { key: null });
    // One of each first, so each kind of answer has its series.
    expect((await poll(randomUUID())).status).toBe(404);
    expect((await badPath(0)).status).toBe(404);
    // The scrapes' own route has its series from the first scrape on; counted apart, all the same.
    const series = (text: string) => samples(text).filter((line) => !line.includes('route="/metrics"'));
    const before = series(await scrape()).length;
    for (let n = 0; n < 1_000; n += 50) {
      await Promise.all(
        Array.from({ length: 50 }, (_, k) => Promise.all([poll(randomUUID()), badPath(n + k)])),
      );
    }
    const text = await scrape();
    expect(series(text).length).toBe(before);
    expect(
      sampleValue(
        text,
        `imagegen_http_request_duration_seconds_count{method="GET",route="(unmatched)",status="404"}`,
      ),
    ).toBe(1_001);
    expect(text).not.toContain('/no/such/path');
  });

  it('reports the queue depth and the age of its oldest task by routing pool', async () => {
    const queueOnly = new Metrics();
    const idle = await startApiHarness({ metrics: queueOnly, withWorkers: false });
    try {
      for (let n = 0; n < 3; n++) {
        expect((await idle.request('POST', TEXT2IMAGE, { json: api.example(TEXT2IMAGE) })).status).toBe(200);
      }
      const enterprise = { ...api.example(TEXT2IMAGE), server_id: 'gpu-1' };
      expect(
        (await idle.request('POST', TEXT2IMAGE, { json: enterprise, key: idle.enterprise.key })).status,
      ).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      const text = (await idle.request('GET', '/metrics', { key: null })).bytes.toString('utf8');
      expect(sampleValue(text, 'imagegen_queue_depth{route="shared"}')).toBe(3);
      expect(sampleValue(text, 'imagegen_queue_depth{route="server:gpu-1"}')).toBe(1);
      expect(sampleValue(text, 'imagegen_queue_oldest_age_seconds{route="shared"}')).toBeGreaterThan(1);
      // The same queue per pipeline, and every other pipeline at 0 rather than missing.
      expect(sampleValue(text, `imagegen_pipeline_queue_depth{pipeline="${TEXT2IMAGE}"}`)).toBe(4);
      expect(
        sampleValue(text, `imagegen_pipeline_queue_oldest_age_seconds{pipeline="${TEXT2IMAGE}"}`),
      ).toBeGreaterThan(1);
      expect(sampleValue(text, 'imagegen_pipeline_queue_depth{pipeline="/sd/image2image/v1"}')).toBe(0);
      expect(sampleValue(text, `imagegen_pipeline_running_tasks{pipeline="${TEXT2IMAGE}"}`)).toBe(0);
      // No webhook waits: its backlog reads 0 from the real outbox.
      expect(sampleValue(text, 'imagegen_webhook_backlog')).toBe(0);
    } finally {
      await idle.close();
    }
  });

  it('reuses a slow reading for ten times its duration, so the database spends at most a tenth on it', async () => {
    const { metrics: slow, reads } = watching(async () => {
      await new Promise((resolve) => setTimeout(resolve, 300));
      return [];
    });
    await slow.render();
    // 1.2 s later: past the one second a quick reading serves, inside the 3 s this one does.
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    await slow.render();
    expect(reads()).toBe(1);
  });

  it("reports the webhook outbox's backlog and the age of its oldest call, from the same reading", async () => {
    const { metrics: outbox, reads } = watching(async () => [], { pending: 42, oldest_seconds: 3600 });
    const text = await outbox.render();
    expect(reads()).toBe(1);
    expect(sampleValue(text, 'imagegen_webhook_backlog')).toBe(42);
    expect(sampleValue(text, 'imagegen_webhook_backlog_oldest_age_seconds')).toBe(3600);
  });

  it('sums running and queued tasks per routing pool and per pipeline from one reading', async () => {
    const rows = [
      { route: 'shared', pipeline: TEXT2IMAGE, state: 'queued', tasks: 5, oldest_seconds: 30 },
      { route: 'server:gpu-1', pipeline: TEXT2IMAGE, state: 'queued', tasks: 2, oldest_seconds: 90 },
      { route: 'shared', pipeline: TEXT2IMAGE, state: 'running', tasks: 3, oldest_seconds: 0 },
      { route: 'shared', pipeline: '/sd/image2image/v1', state: 'running', tasks: 1, oldest_seconds: 0 },
    ];
    const { metrics: signals, reads } = watching(async () => rows);
    const text = await signals.render();
    expect(reads()).toBe(1);
    expect(sampleValue(text, `imagegen_pipeline_queue_depth{pipeline="${TEXT2IMAGE}"}`)).toBe(7);
    expect(sampleValue(text, `imagegen_pipeline_queue_oldest_age_seconds{pipeline="${TEXT2IMAGE}"}`)).toBe(
      90,
    );
    expect(sampleValue(text, `imagegen_pipeline_running_tasks{pipeline="${TEXT2IMAGE}"}`)).toBe(3);
    expect(sampleValue(text, 'imagegen_pipeline_running_tasks{pipeline="/sd/image2image/v1"}')).toBe(1);
    expect(sampleValue(text, 'imagegen_running_tasks{route="shared"}')).toBe(4);
    expect(sampleValue(text, 'imagegen_running_tasks{route="server:gpu-1"}')).toBe(0);
    expect(sampleValue(text, 'imagegen_queue_depth{route="server:gpu-1"}')).toBe(2);
  });

  it('reads the queue once a second whatever the number of scrapes', async () => {
    const { metrics: counting, reads } = watching(async (read) => [
      { route: 'shared', pipeline: TEXT2IMAGE, state: 'queued', tasks: read, oldest_seconds: 1 },
    ]);
    const texts = await Promise.all(Array.from({ length: 20 }, () => counting.render()));
    expect(reads()).toBe(1);
    for (const text of texts) expect(sampleValue(text, 'imagegen_queue_depth{route="shared"}')).toBe(1);
  });

  it("reports each engine server group's states and queue", async () => {
    const engines = new Metrics();
    const server = (name: string, state: 'up' | 'down' | 'unknown', queue: number, suspect?: string) => ({
      name,
      url: `http://${name}.example:8188`,
      state,
      queue,
      inFlight: queue,
      checkpoint: null,
      ...(suspect ? { suspect } : {}),
    });
    engines.watchEngines(() => [
      {
        name: 'comfyui',
        pipelines: [TEXT2IMAGE],
        servers: [
          server('gpu-a', 'up', 2),
          server('gpu-a', 'down', 0),
          server('gpu-b', 'unknown', 1),
          server('gpu-b', 'up', 0, 'prompt p made no progress for 300 s'),
        ],
      },
    ]);
    const text = await engines.render();
    expect(
      sampleValue(text, 'imagegen_engine_server_state{engine="comfyui",server="gpu-a",state="up"}'),
    ).toBe(1);
    expect(
      sampleValue(text, 'imagegen_engine_server_state{engine="comfyui",server="gpu-a",state="down"}'),
    ).toBe(1);
    expect(
      sampleValue(text, 'imagegen_engine_server_state{engine="comfyui",server="gpu-a",state="unknown"}'),
    ).toBe(0);
    expect(
      sampleValue(text, 'imagegen_engine_server_state{engine="comfyui",server="gpu-b",state="unknown"}'),
    ).toBe(1);
    expect(sampleValue(text, 'imagegen_engine_server_queue{engine="comfyui",server="gpu-a"}')).toBe(2);
    // Half of each group is busy; gpu-b's idle server is suspect, and stays up.
    expect(sampleValue(text, 'imagegen_engine_server_busy_ratio{engine="comfyui",server="gpu-a"}')).toBe(0.5);
    expect(sampleValue(text, 'imagegen_engine_server_busy_ratio{engine="comfyui",server="gpu-b"}')).toBe(0.5);
    expect(sampleValue(text, 'imagegen_engine_server_in_flight{engine="comfyui",server="gpu-a"}')).toBe(2);
    expect(sampleValue(text, 'imagegen_engine_server_suspect{engine="comfyui",server="gpu-a"}')).toBe(0);
    expect(sampleValue(text, 'imagegen_engine_server_suspect{engine="comfyui",server="gpu-b"}')).toBe(1);
    expect(
      sampleValue(text, 'imagegen_engine_server_state{engine="comfyui",server="gpu-b",state="up"}'),
    ).toBe(1);
  });

  it('counts out-of-memory failures per server group and shows which pipelines each group can run', async () => {
    const engines = new Metrics();
    const server = (name: string, outOfMemory: number, runs?: string[]) => ({
      name,
      url: `http://${name}.example:8188`,
      state: 'up' as const,
      queue: 0,
      inFlight: 0,
      checkpoint: null,
      outOfMemory,
      ...(runs ? { runs } : {}),
    });
    const INPAINTING = '/sd/inpainting/v1';
    engines.watchEngines(() => [
      {
        name: 'comfyui',
        pipelines: [TEXT2IMAGE, INPAINTING],
        servers: [
          server('gpu-a', 2, [TEXT2IMAGE, INPAINTING]),
          server('gpu-a', 1, [TEXT2IMAGE]),
          // Not read yet: it counts for nothing.
          server('gpu-b', 0),
        ],
      },
    ]);
    const text = await engines.render();
    expect(text).toContain('# TYPE imagegen_engine_server_out_of_memory_total counter');
    expect(
      sampleValue(text, 'imagegen_engine_server_out_of_memory_total{engine="comfyui",server="gpu-a"}'),
    ).toBe(3);
    expect(
      sampleValue(text, 'imagegen_engine_server_out_of_memory_total{engine="comfyui",server="gpu-b"}'),
    ).toBe(0);
    const canRun = (group: string, pipeline: string) =>
      sampleValue(
        text,
        `imagegen_engine_server_can_run{engine="comfyui",server="${group}",pipeline="${pipeline}"}`,
      );
    expect(canRun('gpu-a', TEXT2IMAGE)).toBe(2);
    expect(canRun('gpu-a', INPAINTING)).toBe(1);
    expect(canRun('gpu-b', TEXT2IMAGE)).toBe(0);
  });

  it('answers only a matching bearer token when METRICS_TOKEN is set', async () => {
    const guarded = await startApiHarness({
      metrics: new Metrics({ token: 's3cret-token' }),
      withWorkers: false,
    });
    try {
      const none = await guarded.request('GET', '/metrics', { key: null });
      expect(none.status).toBe(401);
      expect(none.body).toEqual({ detail: 'Not authenticated' });
      const wrong = await guarded.request('GET', '/metrics', {
        key: null,
        headers: { authorization: 'Bearer s3cret-tokex' },
      });
      expect(wrong.status).toBe(401);
      const right = await guarded.request('GET', '/metrics', {
        key: null,
        headers: { authorization: 'Bearer s3cret-token' },
      });
      expect(right.status).toBe(200);
      expect(right.bytes.toString('utf8')).toContain('imagegen_tasks_submitted_total');
    } finally {
      await guarded.close();
    }
  });
});

describe('X-Request-Id', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApiHarness({ withWorkers: false });
  });
  afterAll(() => api.close());

  it("echoes the caller's id when it is plain, and a new one otherwise", async () => {
    const given = await api.request('GET', '/health', {
      key: null,
      headers: { 'x-request-id': 'lb-42.abc' },
    });
    expect(given.headers.get('x-request-id')).toBe('lb-42.abc');
    const made = await api.request('GET', '/health', { key: null });
    expect(made.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const refused = await api.request('GET', '/health', {
      key: null,
      headers: { 'x-request-id': `spaces are "not" ok ${'x'.repeat(10)}` },
    });
    expect(refused.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const long = await api.request('GET', '/health', {
      key: null,
      headers: { 'x-request-id': 'a'.repeat(129) },
    });
    expect(long.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('records it with the task it submits', async () => {
    const submitted = await api.request('POST', TEXT2IMAGE, {
      json: api.example(TEXT2IMAGE),
      headers: { 'x-request-id': 'req-from-proxy-1' },
    });
    expect(submitted.headers.get('x-request-id')).toBe('req-from-proxy-1');
    const id = (submitted.body as { id: string }).id;
    const row = await api.db.pool.query('SELECT request_id FROM tasks WHERE id = $1', [id]);
    expect(row.rows[0]).toEqual({ request_id: 'req-from-proxy-1' });
  });
});
