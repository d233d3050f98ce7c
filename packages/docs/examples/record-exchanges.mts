/**
 * Records, for every task endpoint of the contract, one real exchange with the product: the
 * contract's example body submitted over HTTP to the API as `npm start` wires it, run by its
 * worker with the engine that serves the endpoint, and every answer on the way, normalised so
 * that the same behaviour records the same file. `npm run --silent docs:examples` writes the
 * recordings the docs pages show (examples/recorded/); the docs test records again and compares.
 *
 * The stage, all on loopback:
 * - the engines as `setUpEngines` builds them for `IMAGEGEN_ENGINES=cpu,comfyui,sandbox`: the cpu engine
 *   for what it runs for real, the comfyui engine (against the repository's fake ComfyUI, in
 *   no-time mode) for the diffusion pipelines and training (its models folder is a temporary one);
 * - a stand-in for the public web that serves the example bodies' `https://` links (input images,
 *   the model file of load_model) from `/<host>/<path>`: faces where the pipeline checks for one;
 * - an enterprise owner with a ComfyUI server of its own, `gpu-1`, so that sync_model's example
 *   (`server_id: "any"`) copies a loaded model into that server's model folder.
 *
 * Each endpoint gets a fresh API process on the same database, so its queue estimates start from
 * a snapshot of this task's queue, and a worker that starts only after the queued answer was
 * taken. The worker's engine holds the job at its door until the `started` answer is taken; a
 * comfyui job is then held by the fake after its first sampler step until the `sampling` answer
 * shows the engine's progress. Each answer is therefore taken at a moment the recorder chose, not
 * at whatever moment a poll happened to land.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type FakeComfyUI, startFakeComfyUI } from '@imagegen/comfyui-fake';
import { type Endpoint, endpointByPath, endpoints } from '@imagegen/contract';
import type { Pool } from '@imagegen/db';
import { createOwner, upsertServer } from '@imagegen/server';
import { type LoopbackApi, startLoopbackApi } from '@imagegen/server/testing';
import sharp from 'sharp';
import type {
  ExchangeMoment,
  RecordedAnswer,
  RecordedExchange,
  RecordedOutput,
} from '../src/components/recorded-exchange.ts';
import { normaliser } from './normalise.mts';
import {
  comfyuiModelFiles,
  type HeldRegistry,
  heldAtTheDoor,
  type StageEngines,
  stageEngines,
} from './stage-engines.mts';
import { type StandIn, startStandIn } from './web-stand-in.mts';

/** Every endpoint that creates a task, in the order they are recorded (a load before the sync that names its model). */
export function recordedPaths(): string[] {
  const kinds = new Set<Endpoint['kind']>(['generation', 'load_model', 'training']);
  const paths = endpoints.filter((e) => kinds.has(e.kind) && e.method === 'POST').map((e) => e.path);
  const load = paths.indexOf('/load_model/v1');
  const sync = paths.indexOf('/sync_model/v1');
  if (load > sync) [paths[load], paths[sync]] = [paths[sync]!, paths[load]!];
  return paths;
}

/**
 * How long any one wait of the recorder may take before it gives up naming what it waited for:
 * ample, since the cpu engine's background removal alone takes seconds on a busy machine.
 */
const WAIT_MS = 120_000;
/** The enterprise server of the recording's owner, which sync_model's `server_id: "any"` reaches. */
const OWN_SERVER = 'gpu-1';
/** The shared ComfyUI server every other comfyui task runs on. */
const SHARED_SERVER = 'gpu-0';

export interface Stage {
  readonly pool: Pool;
  readonly apiKey: string;
  readonly web: StandIn;
  readonly setup: StageEngines;
  readonly engines: HeldRegistry;
  readonly fakes: readonly FakeComfyUI[];
  close(): Promise<void>;
}

export interface RecordOptions {
  /** The endpoints to record (default: every task endpoint); a sync_model brings the load_model it syncs. */
  readonly paths?: readonly string[];
  /** Hears one line per endpoint recorded, with its time. */
  readonly log?: (line: string) => void;
}

/**
 * Records the task endpoints on the migrated database `pool`, which should hold nothing else:
 * earlier tasks would show in the queue positions and run-time estimates. Answers the recordings
 * in `recordedPaths()` order.
 */
export async function recordExchanges(pool: Pool, options: RecordOptions = {}): Promise<RecordedExchange[]> {
  const paths = options.paths ?? recordedPaths();
  const stage = await startStage(pool);
  try {
    const recordings: RecordedExchange[] = [];
    /** Run-specific values the recordings so far revealed, with their placeholders. */
    const known = new Map<string, string>();
    for (const taskPath of recordedPaths()) {
      const wanted = paths.includes(taskPath);
      if (!wanted && !(taskPath === '/load_model/v1' && paths.includes('/sync_model/v1'))) continue;
      const started = performance.now();
      const recording = await recordOne(stage, taskPath, known);
      options.log?.(`${taskPath}: ${recording.engine}, ${Math.round(performance.now() - started)} ms`);
      if (wanted) recordings.push(recording);
    }
    return recordings;
  } finally {
    await stage.close();
  }
}

/** The engines, fake ComfyUI servers, stand-in web and owner every recording runs on. */
export async function startStage(pool: Pool): Promise<Stage> {
  const dir = await mkdtemp(path.join(tmpdir(), 'imagegen-docs-examples-'));
  const sharedModels = path.join(dir, 'models-shared');
  const ownModels = path.join(dir, 'models-gpu-1');
  await Promise.all([mkdir(sharedModels), mkdir(ownModels)]);
  const closers: (() => Promise<unknown>)[] = [() => rm(dir, { recursive: true, force: true })];
  const close = async () => {
    for (const closer of [...closers].reverse()) await closer();
  };
  try {
    const web = await startStandIn();
    closers.push(() => web.close());
    const models = comfyuiModelFiles();
    const shared = await startFakeComfyUI({
      models,
      modelsDir: sharedModels,
      stepDelayMs: 0,
      name: SHARED_SERVER,
    });
    closers.push(() => shared.close());
    const own = await startFakeComfyUI({ models, modelsDir: ownModels, stepDelayMs: 0, name: OWN_SERVER });
    closers.push(() => own.close());

    const setup = await stageEngines({
      COMFYUI_URLS: `${SHARED_SERVER}=${shared.url},${OWN_SERVER}=${own.url}`,
      COMFYUI_MODELS_DIR: `${sharedModels},${OWN_SERVER}=${ownModels}`,
    });
    closers.push(() => setup.registry.close());

    const owner = await createOwner(pool, { name: 'docs-examples', plan: 'EPPREMIUM' });
    await upsertServer(pool, { id: OWN_SERVER, ownerId: owner.owner.id });
    return {
      pool,
      apiKey: owner.apiKey,
      web,
      setup,
      engines: heldAtTheDoor(setup.registry),
      fakes: [shared, own],
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

async function recordOne(
  stage: Stage,
  taskPath: string,
  known: Map<string, string>,
): Promise<RecordedExchange> {
  const endpoint = endpointByPath(taskPath);
  if (!endpoint?.status || endpoint.example === undefined)
    throw new Error(`${taskPath} is not a task endpoint with an example`);
  const body = exampleBody(endpoint, known);
  await stage.web.serve(endpoint, body);
  const sent = stage.web.toLoopback(body);

  const api = await startLoopbackApi({
    pool: stage.pool,
    engines: stage.engines,
    withWorker: false,
    worker: {
      preflights: stage.setup.preflights,
      safety: stage.setup.safety,
      // The sampling answer waits for the engine's progress to be written: soon, not in 500 ms.
      progressFlushMs: 20,
    },
  });
  try {
    const answers: {
      moment: ExchangeMoment;
      method: 'GET' | 'POST';
      route: string;
      status: number;
      body: unknown;
    }[] = [];
    const ask = async (moment: ExchangeMoment, method: 'GET' | 'POST', route: string, json?: unknown) => {
      const answer = await call(api, stage.apiKey, method, route, json);
      answers.push({ moment, method, route, ...answer });
      return answer.body as Record<string, unknown>;
    };
    const accepted = await ask('submitted', 'POST', taskPath, sent);
    const id = accepted.id;
    if (typeof id !== 'string')
      throw new Error(`${taskPath}: the submission was refused: ${JSON.stringify(accepted)}`);
    const statusRoute = endpoint.status.path.replace(/\{[a-z_]+\}/, id);
    const status = () =>
      call(api, stage.apiKey, 'GET', statusRoute).then((answer) => answer.body as Record<string, unknown>);

    await ask('queued', 'GET', statusRoute);
    const door = stage.engines.arm();
    for (const fake of stage.fakes) fake.faults.afterStep(1, 'stall');
    api.addWorker();
    /** Waits until `there()` or the task has ended (a task can end before a moment, e.g. refused at its input). */
    const reaches = (moment: string, there: () => boolean) =>
      until(`${taskPath} to reach the moment ${moment} or end`, async () =>
        there() ? true : ended(await status()) ? false : undefined,
      );
    if (await reaches('started', () => door.reached)) {
      await ask('started', 'GET', statusRoute);
      door.open();
      if (await reaches('sampling', () => stage.fakes.some((fake) => fake.stalled))) {
        // The engine's progress reaches the status with the worker's next write of it.
        await until(`${taskPath}: the sampling progress to show`, async () =>
          'progress' in (await status()) ? true : undefined,
        );
        await ask('sampling', 'GET', statusRoute);
        for (const fake of stage.fakes) fake.faults.resume();
      }
    }
    await until(`${taskPath} to end`, async () => (ended(await status()) ? true : undefined));
    const final = await ask('finished', 'GET', statusRoute);

    const outputs = await outputImages(final);
    const engine = stage.setup.registry.engineFor(taskPath)?.name;
    if (!engine) throw new Error(`${taskPath}: no engine serves it on the recording's stage`);

    // What this run revealed: the task's id, the model it registered, the links it handed out.
    known.set(id, '<task-id>');
    if (typeof final.model_id === 'string') known.set(final.model_id, '<model-id>');
    const normalise = normaliser(api.url, stage.web.url, known);
    return {
      path: taskPath,
      engine,
      request: { method: 'POST', path: taskPath, body: normalise(sent) },
      answers: answers.map(
        (answer): RecordedAnswer => ({
          moment: answer.moment,
          method: answer.method,
          path: normalise(answer.route) as string,
          status: answer.status,
          body: normalise(answer.body),
        }),
      ),
      outputs,
    };
  } finally {
    await api.close();
  }
}

/** Whether a status answer is the task's last: anything but the pending and training-in-progress states. */
function ended(status: Record<string, unknown>): boolean {
  return !['PENDING', 'queued', 'initialising', 'running'].includes(String(status.status));
}

/**
 * The contract's example body of the endpoint; sync_model names the model the recorded
 * load_model registered (the example's id exists in no database).
 */
function exampleBody(endpoint: Endpoint, known: ReadonlyMap<string, string>): Record<string, unknown> {
  const body = structuredClone(endpoint.example) as Record<string, unknown>;
  if (endpoint.path === '/sync_model/v1') {
    const loaded = [...known].find(([, placeholder]) => placeholder === '<model-id>')?.[0];
    if (!loaded) throw new Error('/sync_model/v1 is recorded after /load_model/v1, whose model it syncs');
    body.model_id = loaded;
  }
  return body;
}

async function call(
  api: LoopbackApi,
  key: string,
  method: 'GET' | 'POST',
  route: string,
  json?: unknown,
): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${api.url}${route}`, {
    method,
    headers: { 'API-Key': key, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(json === undefined ? {} : { body: JSON.stringify(json) }),
  });
  return { status: response.status, body: await response.json() };
}

export async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`waited ${WAIT_MS / 1000} s for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The images behind a final answer's links, fetched as a client would. */
async function outputImages(final: Record<string, unknown>): Promise<RecordedOutput[]> {
  const urls = Array.isArray(final.download_urls) ? (final.download_urls as string[]) : [];
  const outputs: RecordedOutput[] = [];
  for (const url of urls) {
    const response = await fetch(url);
    if (!response.ok) throw new Error(`${url} answered ${response.status}`);
    const meta = await sharp(Buffer.from(await response.arrayBuffer())).metadata();
    outputs.push({ format: meta.format ?? 'unknown', width: meta.width ?? 0, height: meta.height ?? 0 });
  }
  return outputs;
}
