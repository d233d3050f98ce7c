import {
  caseJob,
  type FakeComfyUI,
  PIPELINE_SUITE,
  startFakeComfyUI,
  suiteModelFiles,
} from '@imagegen/comfyui-fake';
import { COMPILERS, createComfyClient, createComfyuiEngine } from '@imagegen/engine-comfyui/engine';
import { createEngineRegistry, type Engine } from '@imagegen/engines';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOwner } from '../../src/auth/accounts.ts';
import { Metrics } from '../../src/observability/metrics.ts';
import { apiCalls } from '../support/api-calls.ts';
import { type LoopbackApi, startLoopbackApi } from '../support/loopback.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';

/**
 * A stalled ComfyUI prompt as an operator sees it, through the real API against two FAKE ComfyUI
 * servers: the task still succeeds (its job ran again on the other server), and the server where
 * the prompt stalled shows as suspect on /health and in /metrics until a prompt completes there.
 */

const CHECKPOINTS = { 'sd1.5': 'random-sd15.safetensors' };
const BODY = { prompt: 'a fox', negative_prompt: '', num_inference_steps: 6, width: 64, height: 64 };

let db: TestDatabase;
let api: LoopbackApi;
let engine: Engine;
let key: string;
const metrics = new Metrics();
const fakes: FakeComfyUI[] = [];

beforeAll(async () => {
  const models = await suiteModelFiles(CHECKPOINTS);
  for (const name of ['gpu-a', 'gpu-b'])
    fakes.push(await startFakeComfyUI({ models, stepDelayMs: 20, name }));
  engine = createComfyuiEngine({
    // gpu-a is listed first: an idle pool sends it the first job.
    servers: fakes.map((fake) =>
      createComfyClient({
        url: fake.url,
        name: fake.name,
        silenceMs: 50,
        stallMs: 400,
        requestTimeoutMs: 1_000,
      }),
    ),
    compilers: COMPILERS,
    checkpoints: CHECKPOINTS,
    pool: { checkEveryMs: 60_000 },
  });
  db = await createTestDatabase();
  key = (await createOwner(db.pool, { name: 'stall', plan: 'UNLIMITED' })).apiKey;
  api = await startLoopbackApi({
    pool: db.pool,
    engines: createEngineRegistry([engine], { enabled: ['comfyui'], pinned: {} }),
    metrics,
  });
});

afterAll(async () => {
  await api?.close();
  await engine?.close?.();
  await Promise.all(fakes.map((fake) => fake.close()));
  await db?.drop();
});

const http = apiCalls(() => api.url);

async function healthServers(): Promise<{ name: string; state: string; suspect?: string }[]> {
  const health = (await (await fetch(`${api.url}/health`)).json()) as {
    status: string;
    engines: { name: string; servers: { name: string; state: string; suspect?: string }[] }[];
  };
  expect(health.status).toBe('ok');
  return health.engines.find((entry) => entry.name === 'comfyui')!.servers;
}

async function suspectGauge(server: string): Promise<string | undefined> {
  const text = await metrics.render();
  return text
    .split('\n')
    .find((line) => line.startsWith('imagegen_engine_server_suspect{') && line.includes(`server="${server}"`))
    ?.split(' ')
    .at(-1);
}

describe('a stalled ComfyUI prompt, seen through the API', () => {
  it('runs the task on the other server and shows the first suspect on /health and /metrics until a prompt completes there', async () => {
    const [a, b] = fakes as [FakeComfyUI, FakeComfyUI];
    a.faults.afterStep(2, 'stall');
    const status = await http.settle(
      '/sd/text2image/v1',
      await http.submit('/sd/text2image/v1', BODY, key),
      key,
    );
    expect(status.status, JSON.stringify(status)).toBe('SUCCESS');
    expect(a.counters.interrupts).toBeGreaterThanOrEqual(1);
    expect(b.executions.at(-1)?.status).toBe('success');

    const servers = await healthServers();
    expect(servers.find((server) => server.name === 'gpu-a')).toMatchObject({ state: 'up' });
    expect(servers.find((server) => server.name === 'gpu-a')!.suspect).toMatch(/made no progress/);
    expect(servers.find((server) => server.name === 'gpu-b')!.suspect).toBeUndefined();
    expect(await suspectGauge('gpu-a')).toBe('1');
    expect(await suspectGauge('gpu-b')).toBe('0');

    // A routed job has nowhere else to go: it completes on gpu-a, which clears it.
    const text2image = PIPELINE_SUITE.find((testCase) => testCase.pipeline === '/sd/text2image/v1')!;
    await engine.run(
      { ...(await caseJob(text2image)), servers: ['gpu-a'] },
      { signal: AbortSignal.timeout(15_000), progress: () => {} },
    );
    expect((await healthServers()).find((server) => server.name === 'gpu-a')!.suspect).toBeUndefined();
    expect(await suspectGauge('gpu-a')).toBe('0');
  });
});
