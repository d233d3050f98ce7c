import {
  caseJob,
  type FakeComfyUI,
  notedFields,
  PIPELINE_SUITE,
  startFakeComfyUI,
  suiteModelFiles,
} from '@imagegen/comfyui-fake';
import {
  COMFYUI_PIPELINES,
  COMPILERS,
  createComfyClient,
  createComfyuiEngine,
} from '@imagegen/engine-comfyui/engine';
import { createEngineRegistry, type Engine } from '@imagegen/engines';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOwner } from '../../src/auth/accounts.ts';
import { upsertServer } from '../../src/auth/sql/upsertServer.ts';
import { apiCalls } from '../support/api-calls.ts';
import { type FileServer, type LoopbackApi, serveFiles, startLoopbackApi } from '../support/loopback.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';

/**
 * The comfyui engine through the real API against fake ComfyUI servers: every pipeline of the
 * suite submitted over HTTP, run by the worker and answered with images of the right count and
 * size; and the faults a real deployment meets (a refused graph, a restart mid-task, a server
 * that dies, an aborted attempt), each seen from both ends.
 *
 * Four fakes: `gpu-a` and `gpu-b` serve the shared pool; `e1` and `e2` form the group `big`, an
 * enterprise server of its own, where the fault cases are routed with `server_id: "big"`.
 */

const CHECKPOINTS = {
  'sd1.5': 'random-sd15.safetensors',
  // LCMScheduler's LoRA, which its suite case needs mapped.
  'sd1.5:lcm': 'lcm-lora-sdv1-5.safetensors',
  missing: 'not-on-server.safetensors',
};
/**
 * An attempt longer than this is aborted by the worker (the abort case relies on it). Every case
 * runs under it, so it leaves room for a busy machine: at 8 s, runs with input pictures failed
 * under a whole suite's load.
 */
const ATTEMPT_LIMIT_MS = 20_000;

let db: TestDatabase;
let api: LoopbackApi;
let pictures: FileServer;
let engine: Engine;
let shared: string;
let enterprise: string;
const fakes: Record<'gpu-a' | 'gpu-b' | 'e1' | 'e2', FakeComfyUI> = {} as never;

/** Where the pictures of the suite's case n are served. */
const pictureUrl = (n: number) => (field: string, i?: number) =>
  `${pictures.url}/${n}/${field}${i === undefined ? '' : `-${i}`}.png`;

beforeAll(async () => {
  const models = await suiteModelFiles(CHECKPOINTS);
  const names = { 'gpu-a': 'gpu-a', 'gpu-b': 'gpu-b', e1: 'big', e2: 'big' } as const;
  for (const key of Object.keys(names) as (keyof typeof names)[]) {
    fakes[key] = await startFakeComfyUI({ models, stepDelayMs: 1, name: names[key] });
  }
  // The suite's pictures, served on loopback under /<case>/<field>[-n].png.
  const files: Record<string, readonly [string, Buffer]> = {};
  pictures = await serveFiles(files);
  for (const [n, testCase] of PIPELINE_SUITE.entries()) {
    for (const value of Object.values((await caseJob(testCase, pictureUrl(n))).images)) {
      for (const image of [value].flat())
        files[new URL(image.url).pathname] = ['image/png', await image.read()];
    }
  }

  db = await createTestDatabase();
  const sharedOwner = await createOwner(db.pool, { name: 'comfy-shared', plan: 'UNLIMITED' });
  shared = sharedOwner.apiKey;
  // The owner's models the suite's cases name by id (an uploaded adapter), ready as a load leaves them.
  for (const model of PIPELINE_SUITE.flatMap((testCase) => testCase.ownerModels ?? [])) {
    await db.pool.query(
      `INSERT INTO models (owner_id, model_id, model_name, base_model, model_type, model_extension, status)
       VALUES ($1, $2, $3, $4, $5, 'safetensors', 'ready')`,
      [sharedOwner.owner.id, model.modelId, `suite ${model.modelType}`, model.baseModel, model.modelType],
    );
  }
  const acme = await createOwner(db.pool, { name: 'comfy-acme', plan: 'EPPREMIUM' });
  enterprise = acme.apiKey;
  await upsertServer(db.pool, { id: 'big', ownerId: acme.owner.id });

  engine = createComfyuiEngine({
    servers: Object.values(fakes).map((fake) =>
      createComfyClient({
        url: fake.url,
        name: fake.name,
        requestTimeoutMs: 1_500,
        silenceMs: 300,
        maxFailedChecks: 2,
        connectTimeoutMs: 1_000,
        reconnectDelayMs: 50,
      }),
    ),
    compilers: COMPILERS,
    checkpoints: CHECKPOINTS,
    pool: { checkEveryMs: 300, backoffMs: 100, maxBackoffMs: 300, checkTimeoutMs: 1_000, downWaitMs: 10_000 },
  });
  const engines = createEngineRegistry([engine], { enabled: ['comfyui'], pinned: {} });
  api = await startLoopbackApi({ pool: db.pool, engines, worker: { attemptTimeoutMs: ATTEMPT_LIMIT_MS } });
});

afterAll(async () => {
  await api?.close();
  await engine?.close?.();
  await Promise.all(Object.values(fakes).map((fake) => fake.close()));
  await pictures?.close();
  await db?.drop();
});

const http = apiCalls(() => api.url);
const { call } = http;
const submit = (pipeline: string, body: Record<string, unknown>, key = shared) =>
  http.submit(pipeline, body, key);
const settle = (pipeline: string, id: string, key = shared) => http.settle(pipeline, id, key);

async function until<T>(what: string, probe: () => T | undefined, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`waited ${ms} ms for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A routed task to the group `big` that samples slowly, so a fault can strike while it runs. */
const SLOW = { prompt: 'a slow fox', negative_prompt: '', num_inference_steps: 12, width: 64, height: 64 };

/** The fake of the group `big` that started running a prompt after `since` prompts in all. */
async function runningIn(since: Record<'e1' | 'e2', number>): Promise<'e1' | 'e2'> {
  return until('a prompt to start on the group big', () =>
    (['e1', 'e2'] as const).find((key) => fakes[key].executions.length > since[key]),
  );
}

const countsOf = () => ({ e1: fakes.e1.executions.length, e2: fakes.e2.executions.length });

describe('the comfyui engine through the API', () => {
  it('has a case for every pipeline it compiles', () => {
    expect(new Set(PIPELINE_SUITE.map((testCase) => testCase.pipeline))).toEqual(new Set(COMFYUI_PIPELINES));
  });

  // A training's answer is a model, and this engine has no COMFYUI_MODELS_DIR to store it in:
  // comfyui-training-api.test.ts runs that case.
  it.each(
    PIPELINE_SUITE.flatMap((testCase, n) => (testCase.expect.model ? [] : [[testCase.name, n] as const])),
  )('runs %s: SUCCESS with images of the right count and size', async (_name, n) => {
    const testCase = PIPELINE_SUITE[n]!;
    // The body as the contract reads it, with the pictures' URLs.
    const { input } = await caseJob(testCase, pictureUrl(n));
    const body = Object.fromEntries(
      [...Object.keys(testCase.body), ...Object.keys(testCase.images)].map((field) => [field, input[field]]),
    );
    const id = await submit(testCase.pipeline, body);
    const status = await settle(testCase.pipeline, id);
    expect(status.status, JSON.stringify(status)).toBe('SUCCESS');
    // A field the model takes no notice of (as the original's pipeline took none) is named in notes.
    expect(notedFields(status.notes as string[] | undefined)).toEqual(testCase.expect.notes ?? []);
    const urls = (status.download_urls ?? status.output ?? []) as string[];
    expect(urls).toHaveLength(testCase.expect.count);
    // A describing pipeline answers the text its output node showed.
    if (testCase.expect.text) expect(status.prompt).toMatch(/^a description by \w+ of a \d+x\d+ picture$/);
    for (const url of urls) {
      const file = await fetch(url);
      expect(file.status).toBe(200);
      const bytes = Buffer.from(await file.arrayBuffer());
      // ComfyUI writes its graph into every PNG (and the fake does as it does): it is not handed out.
      expect(bytes.toString('latin1')).not.toContain('class_type');
      const meta = await sharp(bytes).metadata();
      expect([meta.format, meta.width, meta.height]).toEqual([
        'png',
        testCase.expect.width,
        testCase.expect.height,
      ]);
    }
  });

  it("reports progress from ComfyUI's sampler steps in the task's status", async () => {
    // Progress is written at most every 500 ms: 25 steps of 100 ms leave room for several writes
    // before the task ends, however late on a busy machine the first one lands.
    fakes['gpu-a'].faults.slow(100);
    fakes['gpu-b'].faults.slow(100);
    try {
      const id = await submit('/sd/text2image/v1', { ...SLOW, num_inference_steps: 25 });
      const seen = new Set<number>();
      for (;;) {
        const { body } = await call('GET', `/sd/text2image/v1/status/${id}`, shared);
        if (body.status !== 'PENDING') break;
        const row = await db.pool.query<{ progress: number | null }>(
          'SELECT progress FROM tasks WHERE id = $1',
          [id],
        );
        if (row.rows[0]?.progress) seen.add(row.rows[0].progress);
        await new Promise((resolve) => setTimeout(resolve, 30));
      }
      const fractions = [...seen];
      expect(fractions.length).toBeGreaterThan(1);
      expect(fractions.every((f) => f > 0 && f <= 1)).toBe(true);
      expect(fractions.some((f) => f < 1)).toBe(true);
    } finally {
      fakes['gpu-a'].faults.slow(1);
      fakes['gpu-b'].faults.slow(1);
    }
  });

  it('refuses at submission a request whose checkpoint no server of its pool has, naming each server', async () => {
    const response = await fetch(`${api.url}/sd/text2image/v1`, {
      method: 'POST',
      headers: { 'API-Key': shared, 'content-type': 'application/json' },
      body: JSON.stringify({ ...SLOW, num_inference_steps: 2, model_id: 'missing' }),
    });
    expect(response.status).toBe(422);
    expect(await response.json()).toEqual({
      detail: [
        {
          loc: ['body', 'model_id'],
          msg: expect.stringMatching(
            /^no ComfyUI server here can run this graph: server gpu-a lacks the checkpoint 'not-on-server\.safetensors'; server gpu-b lacks the checkpoint 'not-on-server\.safetensors'/,
          ),
          type: 'value_error.server_capability',
        },
      ],
    });
  });

  it('fails a task whose graph the server refuses, naming what and where in plain words', async () => {
    // What the servers said they have passes the graph; the servers refuse it all the same.
    fakes['gpu-a'].faults.refuse();
    fakes['gpu-b'].faults.refuse();
    try {
      const id = await submit('/sd/text2image/v1', { ...SLOW, num_inference_steps: 2 });
      const status = await settle('/sd/text2image/v1', id);
      expect(status.status).toBe('FAILURE');
      expect(String(status.error ?? status.message)).toMatch(
        /^unknown checkpoint 'no_such_model\.safetensors' on server gpu-[ab]$/,
      );
      const row = await db.pool.query('SELECT attempts FROM tasks WHERE id = $1', [id]);
      expect(row.rows[0].attempts).toBe(1);
    } finally {
      fakes['gpu-a'].faults.refuse(false);
      fakes['gpu-b'].faults.refuse(false);
    }
  });

  it('runs only on the servers a routed task names', async () => {
    const before = countsOf();
    const others = fakes['gpu-a'].executions.length + fakes['gpu-b'].executions.length;
    const ids = await Promise.all(
      [1, 2, 3].map(() =>
        submit('/sd/text2image/v1', { ...SLOW, num_inference_steps: 2, server_id: 'big' }, enterprise),
      ),
    );
    for (const id of ids) expect((await settle('/sd/text2image/v1', id, enterprise)).status).toBe('SUCCESS');
    const after = countsOf();
    expect(after.e1 - before.e1 + after.e2 - before.e2).toBe(3);
    expect(fakes['gpu-a'].executions.length + fakes['gpu-b'].executions.length).toBe(others);
  });

  it('resubmits once, and succeeds, when its server restarts mid-task and forgets it', async () => {
    fakes.e1.faults.slow(100);
    fakes.e2.faults.slow(100);
    try {
      const before = countsOf();
      const id = await submit('/sd/text2image/v1', { ...SLOW, server_id: 'big' }, enterprise);
      const key = await runningIn(before);
      await new Promise((resolve) => setTimeout(resolve, 250));
      fakes[key].faults.slow(1);
      fakes[key].faults.restart();
      const status = await settle('/sd/text2image/v1', id, enterprise);
      expect(status.status, JSON.stringify(status)).toBe('SUCCESS');
      expect(fakes[key].counters.restarts).toBe(1);
      const after = countsOf();
      // Twice on the server that restarted (lost, then run again), never on the other, one attempt.
      expect(after[key] - before[key]).toBe(2);
      expect(after[key === 'e1' ? 'e2' : 'e1']).toBe(before[key === 'e1' ? 'e2' : 'e1']);
      expect(fakes[key].executions.at(-1)!.status).toBe('success');
      const row = await db.pool.query('SELECT attempts FROM tasks WHERE id = $1', [id]);
      expect(row.rows[0].attempts).toBe(1);
    } finally {
      fakes.e1.faults.slow(1);
      fakes.e2.faults.slow(1);
    }
  });

  it('runs the task again on another server of its group when its server dies mid-task', async () => {
    fakes.e1.faults.slow(100);
    fakes.e2.faults.slow(100);
    let dead: 'e1' | 'e2' | undefined;
    try {
      const before = countsOf();
      const id = await submit('/sd/text2image/v1', { ...SLOW, server_id: 'big' }, enterprise);
      dead = await runningIn(before);
      const other = dead === 'e1' ? 'e2' : 'e1';
      fakes[other].faults.slow(1);
      fakes[dead].faults.die();
      const status = await settle('/sd/text2image/v1', id, enterprise);
      expect(status.status, JSON.stringify(status)).toBe('SUCCESS');
      expect(fakes[other].executions.length - before[other]).toBe(1);
      expect(fakes[other].executions.at(-1)!.status).toBe('success');
      const health = (await (await fetch(`${api.url}/health`)).json()) as {
        engines: { name: string; servers: { url: string; state: string }[] }[];
      };
      const servers = health.engines.find((entry) => entry.name === 'comfyui')!.servers;
      expect(servers.find((server) => server.url === fakes[dead!].url)!.state).toBe('down');
    } finally {
      fakes.e1.faults.slow(1);
      fakes.e2.faults.slow(1);
      if (dead) fakes[dead].faults.restart();
    }
    // The pool checks it again and takes it back.
    await until('the dead server to be up again', () =>
      engine.servers!().every((server) => server.state === 'up') ? true : undefined,
    );
  });

  it(
    'interrupts its prompt on the server when the attempt is aborted',
    async () => {
      fakes.e1.faults.slow(1_000);
      fakes.e2.faults.slow(1_000);
      try {
        const before = countsOf();
        const interrupts = fakes.e1.counters.interrupts + fakes.e2.counters.interrupts;
        // 40 steps of 1 s: far past the attempt's time limit.
        const id = await submit(
          '/sd/text2image/v1',
          { ...SLOW, num_inference_steps: 40, server_id: 'big' },
          enterprise,
        );
        const key = await runningIn(before);
        // The worker aborts the attempt at its time limit: the client interrupts that prompt only.
        const interrupted = () => fakes.e1.counters.interrupts + fakes.e2.counters.interrupts > interrupts;
        await until('an interrupt', () => (interrupted() ? true : undefined), ATTEMPT_LIMIT_MS + 10_000);
        // The worker retries the attempt, which now runs at once.
        fakes.e1.faults.slow(1);
        fakes.e2.faults.slow(1);
        expect(fakes[key].counters.interrupts).toBeGreaterThan(0);
        await until('the prompt to end interrupted', () =>
          fakes[key].executions[before[key]]?.status === 'interrupted' ? true : undefined,
        );
        const status = await settle('/sd/text2image/v1', id, enterprise);
        expect(status.status).toBe('SUCCESS');
        const row = await db.pool.query('SELECT attempts FROM tasks WHERE id = $1', [id]);
        expect(row.rows[0].attempts).toBe(2);
      } finally {
        fakes.e1.faults.slow(1);
        fakes.e2.faults.slow(1);
      }
    },
    ATTEMPT_LIMIT_MS + 60_000,
  );

  it('shows every ComfyUI server on /health with its state, queue and loaded checkpoint', async () => {
    type Health = { engines: { name: string; pipelines: string[]; servers: Record<string, unknown>[] }[] };
    const comfyuiOn = async () =>
      ((await (await fetch(`${api.url}/health`)).json()) as Health).engines.find(
        (entry) => entry.name === 'comfyui',
      )!;
    // A server's queue counts the prompts it reported at the engine's last look, which comes every
    // few seconds: the prompt the test before interrupted can still be counted until the next one.
    let comfyui = await comfyuiOn();
    const deadline = Date.now() + 20_000;
    while (comfyui.servers.some((server) => server.queue !== 0) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      comfyui = await comfyuiOn();
    }
    expect(comfyui.pipelines).toEqual(COMFYUI_PIPELINES.filter((pipeline) => pipeline !== '/train_model/v1'));
    expect(comfyui.servers.map((server) => [server.name, server.url, server.state])).toEqual([
      ['gpu-a', fakes['gpu-a'].url, 'up'],
      ['gpu-b', fakes['gpu-b'].url, 'up'],
      ['big', fakes.e1.url, 'up'],
      ['big', fakes.e2.url, 'up'],
    ]);
    for (const server of comfyui.servers) {
      expect(server).toMatchObject({ queue: 0, inFlight: 0 });
      expect(typeof server.checkpoint).toBe('string');
    }
  });
});
