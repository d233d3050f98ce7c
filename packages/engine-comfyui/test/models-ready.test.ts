import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { type FakeComfyUI, startFakeComfyUI } from '@imagegen/comfyui-fake';
import { compileRequestValidator, endpointByPath } from '@imagegen/contract';
import type { Engine, EngineJob, JobModel, ModelSource } from '@imagegen/engines';
import { afterEach, describe, expect, it } from 'vitest';
import { createComfyClient } from '../src/client/index.ts';
import { createComfyuiEngine } from '../src/comfyui-engine.ts';
import { COMPILERS } from '../src/compilers/index.ts';
import { ModelBudget, parseModelsBudget } from '../src/model-budget.ts';
import { fetchManifest, type ManifestEntry, parseManifest } from '../src/model-manifest.ts';
import { parseWarmup } from '../src/warm-up.ts';

/**
 * Models ready before work, driven through FAKE ComfyUI servers and a loopback file server: the
 * operator's manifest is fetched into the models folder before the engine has started (what it
 * does meanwhile is what readiness says), a warm-up prompt of each mapped family runs on each
 * server when it answers and again when it comes back, and the models owners load stay within a
 * disk budget, least recently used out first, fetched again when a job names them.
 */

const SD15 = 'random-sd15.safetensors';
let fakes: FakeComfyUI[] = [];
let engine: Engine | undefined;
let files: Server | undefined;
const scratch: string[] = [];

afterEach(async () => {
  await engine?.close?.();
  await Promise.all(fakes.map((fake) => fake.close()));
  if (files) await new Promise((resolve) => files!.close(resolve));
  await Promise.all(scratch.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
  engine = undefined;
  files = undefined;
  fakes = [];
});

async function folder(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'imagegen-models-ready-'));
  scratch.push(dir);
  return dir;
}

/** Serves these files on loopback (GET /<name>), counting requests; `held` ones answer when released. */
async function serveFiles(content: Record<string, Buffer>) {
  const asked: string[] = [];
  let release: (() => void) | undefined;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const holding = new Set<string>();
  files = createServer(async (request, response) => {
    const name = (request.url ?? '/').slice(1);
    asked.push(name);
    if (holding.has(name)) await held;
    const body = content[name];
    if (!body) response.writeHead(404).end();
    else response.writeHead(200, { 'content-length': body.length }).end(body);
  });
  await new Promise<void>((resolve) => files!.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
  return { base, asked, hold: (name: string) => holding.add(name), release: () => release?.() };
}

/** A ModelSource over plain fetch, as the server's guarded fetcher streams (tests of the guard are the server's). */
const fetchModel: ModelSource = async (url, signal) => {
  const response = await fetch(url, { signal });
  if (response.status !== 200) throw new Error(`model_url: server answered HTTP ${response.status}`);
  const length = Number(response.headers.get('content-length'));
  return { length: Number.isFinite(length) ? length : null, body: Readable.fromWeb(response.body as never) };
};

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

describe('the model manifest', () => {
  it('refuses a malformed manifest, naming the entry and what is wrong', () => {
    const bad = (models: unknown, message: string) =>
      expect(() => parseManifest({ models }, '/etc/models.json')).toThrow(message);
    bad([{ folder: 'checkpoints', name: 'a.safetensors' }], 'models[0]: give either "url" or "path"');
    bad(
      [{ url: 'ftp://x/a', folder: 'checkpoints', name: 'a.safetensors' }],
      '"url" must be an http:// or https:// URL',
    );
    bad(
      [{ path: 'relative/a', folder: 'checkpoints', name: 'a.safetensors' }],
      '"path" must be an absolute path',
    );
    bad(
      [{ url: 'https://x/a', folder: '../etc', name: 'a.safetensors' }],
      '"folder" must be a folder under models/',
    );
    bad([{ url: 'https://x/a', folder: 'checkpoints', name: '../a' }], '"name" must be a plain file name');
    bad([{ url: 'https://x/a', folder: 'checkpoints', name: '.hidden' }], '"name" must be a plain file name');
    bad(
      [{ url: 'https://x/a', folder: 'loras', name: 'a.safetensors', sha256: 'abc' }],
      '"sha256" must be 64 hexadecimal digits',
    );
    bad(
      [
        { url: 'https://x/a', folder: 'loras', name: 'a.safetensors' },
        { url: 'https://x/b', folder: 'loras', name: 'a.safetensors' },
      ],
      'models[1]: loras/a.safetensors is listed twice',
    );
    bad([{ url: 'https://x/a', folder: 'loras', name: 'a.safetensors', size: 3 }], 'unknown key "size"');
    expect(() => parseManifest({}, '/etc/models.json')).toThrow(
      'COMFYUI_MODEL_MANIFEST: /etc/models.json holds no "models" list',
    );
    expect(
      parseManifest(
        [
          {
            url: 'https://x/a',
            folder: 'LLM/Florence-2-large',
            name: 'model.safetensors',
            sha256: 'A'.repeat(64),
          },
        ],
        'f',
      ),
    ).toEqual([
      {
        url: 'https://x/a',
        folder: 'LLM/Florence-2-large',
        name: 'model.safetensors',
        sha256: 'a'.repeat(64),
      },
    ]);
  });

  it('fetches every file into the models folder before the engine has started, saying what it does meanwhile', async () => {
    const models = await folder();
    const big = Buffer.alloc(200_000, 7);
    const lora = Buffer.from('a lora');
    const local = path.join(await folder(), 'local.safetensors');
    await writeFile(local, 'from a local path');
    const served = await serveFiles({ 'base.safetensors': big, 'detail.safetensors': lora });
    served.hold('base.safetensors');
    const manifest: ManifestEntry[] = [
      {
        url: `${served.base}/base.safetensors`,
        folder: 'checkpoints',
        name: 'base.safetensors',
        sha256: sha256(big),
      },
      { url: `${served.base}/detail.safetensors`, folder: 'loras', name: 'detail-tweaker.safetensors' },
      { path: local, folder: 'upscale_models', name: 'esrgan.pth' },
    ];
    fakes = [await startFakeComfyUI({ stepDelayMs: 1, modelsDir: models })];
    engine = createComfyuiEngine({
      servers: [createComfyClient({ url: fakes[0]!.url, name: 'gpu-a' })],
      compilers: COMPILERS,
      checkpoints: { 'sd1.5': SD15 },
      modelFiles: { folders: { shared: models, byServer: {} }, maxBytes: 1_000_000, fetch: fetchModel },
      manifest,
    });
    let done = false;
    const started = engine.start!().then(() => (done = true));
    // The first file is held by its server: start waits, and says why.
    for (const limit = Date.now() + 10_000; !engine.startup!()?.startsWith('fetching models'); ) {
      if (Date.now() > limit) throw new Error(`startup says ${engine.startup!()}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(engine.startup!()).toMatch(/^fetching models \(1 of 3: checkpoints\/base\.safetensors/);
    expect(done).toBe(false);
    served.release();
    await started;
    expect(engine.startup!()).toBeNull();
    expect(await readFile(path.join(models, 'checkpoints', 'base.safetensors'))).toEqual(big);
    expect(await readFile(path.join(models, 'loras', 'detail-tweaker.safetensors'), 'utf8')).toBe('a lora');
    expect(await readFile(path.join(models, 'upscale_models', 'esrgan.pth'), 'utf8')).toBe(
      'from a local path',
    );
    // The server lists them: a job that loads the base checkpoint runs.
    const work = job('/sd/text2image/v1', {
      prompt: 'a fox',
      negative_prompt: '',
      width: 64,
      height: 64,
      num_inference_steps: 1,
    });
    const withBase = createComfyuiEngine({
      servers: [createComfyClient({ url: fakes[0]!.url, name: 'gpu-a' })],
      compilers: COMPILERS,
      checkpoints: { 'sd1.5': 'base.safetensors' },
    });
    try {
      await withBase.start!();
      expect(
        (await withBase.run(work, { signal: AbortSignal.timeout(20_000), progress: () => {} })).images,
      ).toHaveLength(1);
    } finally {
      await withBase.close!();
    }

    // A second start finds every file in place (the checked one by its marker) and fetches nothing.
    const asked = served.asked.length;
    const again = createComfyuiEngine({
      servers: [createComfyClient({ url: fakes[0]!.url, name: 'gpu-a' })],
      compilers: COMPILERS,
      checkpoints: { 'sd1.5': SD15 },
      modelFiles: { folders: { shared: models, byServer: {} }, maxBytes: 1_000_000, fetch: fetchModel },
      manifest,
    });
    try {
      await again.start!();
    } finally {
      await again.close!();
    }
    expect(served.asked.length).toBe(asked);
  });

  it('removes a download whose sha256 differs, and gives an entry up after its tries without holding the others', async () => {
    const models = await folder();
    const served = await serveFiles({
      'a.safetensors': Buffer.from('not what was promised'),
      'c.safetensors': Buffer.from('c'),
    });
    const lines: string[] = [];
    const outcome = await fetchManifest(
      [
        {
          url: `${served.base}/a.safetensors`,
          folder: 'loras',
          name: 'a.safetensors',
          sha256: '0'.repeat(64),
        },
        { url: `${served.base}/missing.safetensors`, folder: 'loras', name: 'b.safetensors' },
        { url: `${served.base}/c.safetensors`, folder: 'loras', name: 'c.safetensors' },
      ],
      {
        folders: { shared: models, byServer: {} },
        maxBytes: 1_000_000,
        fetch: fetchModel,
        signal: AbortSignal.timeout(20_000),
        onStatus: () => {},
        log: (line) => lines.push(line),
        retryMs: 10,
      },
    );
    expect(outcome.ready).toEqual(['loras/c.safetensors']);
    expect(outcome.failed).toEqual([
      {
        file: 'loras/a.safetensors',
        error: expect.stringMatching(
          /^its sha256 is [0-9a-f]{64}, not the manifest's 0{64}; the file was removed$/,
        ),
      },
      { file: 'loras/b.safetensors', error: 'model_url: server answered HTTP 404' },
    ]);
    expect(served.asked.filter((name) => name === 'a.safetensors')).toHaveLength(3);
    expect(await readdir(path.join(models, 'loras'))).toEqual(['c.safetensors']);
    expect(lines).toContain(
      'model manifest: loras/b.safetensors failed (model_url: server answered HTTP 404); trying again in 0.01 s',
    );
  });
});

/** A load_model request for a LoRA at the model's URL. */
function loadBody(m: JobModel): Record<string, unknown> {
  return {
    model_name: 'a lora',
    pretrained_model_path: null,
    model_url: m.url,
    base_model: 'sd1.5',
    model_type: 'lora',
    description: '',
    sample_images: [],
    visibility: 'private',
    model_extension: 'safetensors',
  };
}

function job(pipeline: string, body: Record<string, unknown>, models?: Record<string, JobModel>): EngineJob {
  const checked = compileRequestValidator(endpointByPath(pipeline)!)(body);
  if (!checked.ok) throw new Error(JSON.stringify(checked.detail));
  return {
    pipeline,
    input: checked.value as Record<string, unknown>,
    images: {},
    seed: 3,
    ...(models ? { models } : {}),
  };
}

describe('warm-up prompts', () => {
  it('reads COMFYUI_WARMUP: by default each family COMFYUI_CHECKPOINTS maps, or off, or a list', () => {
    expect(parseWarmup(undefined, { 'sd1.5': 'a', sdxl: 'b', 'my-xl': 'c', 'flux-dev': 'd' })).toEqual([
      'sd1.5',
      'sdxl',
      'flux',
    ]);
    expect(parseWarmup('', {})).toEqual([]);
    expect(parseWarmup('off', { 'sd1.5': 'a' })).toEqual([]);
    expect(parseWarmup('sdxl, sd3.5,sdxl', {})).toEqual(['sdxl', 'sd3.5']);
    expect(() => parseWarmup('sd2', {})).toThrow(
      'COMFYUI_WARMUP: "sd2" is not off or a family (sd1.5, sdxl, sd3, sd3.5, flux)',
    );
  });

  it('runs each family’s smallest graph on every server before the engine has started, previews only, and again when a server comes back', async () => {
    fakes = [
      await startFakeComfyUI({ stepDelayMs: 1, models: { checkpoints: [SD15, 'xl.safetensors'] } }),
      await startFakeComfyUI({ stepDelayMs: 1, models: { checkpoints: [SD15, 'xl.safetensors'] } }),
    ];
    const [a, b] = fakes as [FakeComfyUI, FakeComfyUI];
    engine = createComfyuiEngine({
      servers: fakes.map((fake, n) => createComfyClient({ url: fake.url, name: `gpu-${n}` })),
      compilers: COMPILERS,
      checkpoints: { 'sd1.5': SD15, sdxl: 'xl.safetensors' },
      warmup: ['sd1.5', 'sdxl'],
      pool: { checkEveryMs: 100, backoffMs: 20, maxBackoffMs: 50 },
    });
    await engine.start!();
    for (const fake of [a, b]) {
      expect(fake.executions.map((record) => record.status)).toEqual(['success', 'success']);
      expect(fake.counters.promptsReceived).toBe(2);
      // Their pictures are previews (ComfyUI's temp folder), never output files.
      const history = (await (await fetch(`${fake.url}/history`)).json()) as Record<
        string,
        { outputs: Record<string, { images: { type: string }[] }> }
      >;
      const types = Object.values(history).flatMap((entry) =>
        Object.values(entry.outputs).flatMap((output) => output.images.map((image) => image.type)),
      );
      expect(types).toEqual(['temp', 'temp']);
    }
    await a.faults.kill();
    // Its next check finds it gone; when it answers again it is cold, and warmed up again.
    for (const limit = Date.now() + 20_000; engine.servers!()[0]!.state !== 'down'; ) {
      if (Date.now() > limit) throw new Error('gpu-0 was not found down');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await a.faults.revive();
    for (const limit = Date.now() + 20_000; a.executions.filter((r) => r.status).length < 4; ) {
      if (Date.now() > limit) throw new Error('gpu-0 was not warmed up again');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(a.executions.slice(2).map((record) => record.status)).toEqual(['success', 'success']);
  });
});

describe('the disk budget of the models owners load', () => {
  const model = (id: string, url: string | null): JobModel => ({
    modelId: id.padEnd(32, '0'),
    modelType: 'lora',
    baseModel: 'sd1.5',
    extension: 'safetensors',
    url,
  });

  it('reads COMFYUI_MODELS_BUDGET as whole bytes', () => {
    expect(parseModelsBudget(undefined)).toBeNull();
    expect(parseModelsBudget('1073741824')).toBe(1073741824);
    expect(() => parseModelsBudget('1GiB')).toThrow(
      'COMFYUI_MODELS_BUDGET=1GiB is not a positive whole number of bytes',
    );
  });

  it('evicts the least recently used of the loaded models, never a kept file, a trained one or one in use', async () => {
    const models = await folder();
    const loras = path.join(models, 'loras');
    await mkdir(loras, { recursive: true });
    const budget = new ModelBudget(
      { shared: models, byServer: {} },
      250,
      new Set(['loras/' + 'kept'.padEnd(32, '0') + '.safetensors']),
      () => {},
    );
    const write = async (m: JobModel, bytes: number, usedAt: number) => {
      const file = path.join(loras, `${m.modelId}.safetensors`);
      await writeFile(file, Buffer.alloc(bytes));
      await utimes(file, usedAt / 1000, usedAt / 1000);
      await budget.remember(models, m);
    };
    const old = model('a1', 'https://models.example/a1');
    const newer = model('b2', 'https://models.example/b2');
    const inUse = model('c3', 'https://models.example/c3');
    const trained = model('d4', null);
    const kept = model('kept', 'https://models.example/kept');
    await write(inUse, 100, 1_000_000);
    await write(old, 100, 2_000_000);
    await write(newer, 100, 3_000_000);
    await write(trained, 100, 500_000);
    await write(kept, 100, 400_000);
    const release = await budget.use([inUse]);
    await budget.enforce();
    release();
    const left = (await readdir(loras)).filter((name) => !name.startsWith('.')).sort();
    // 300 evictable bytes over a budget of 250: the oldest that is not in use (a1) goes.
    expect(left).toEqual([inUse, newer, trained, kept].map((m) => `${m.modelId}.safetensors`).sort());
    expect(budget.figures()).toEqual({ bytes: 200, budgetBytes: 250, evictions: 1 });
    // `use` made c3 the most recently used.
    expect((await stat(path.join(loras, `${inUse.modelId}.safetensors`))).mtimeMs).toBeGreaterThan(
      3_000_000_000,
    );
  });

  it('fetches an evicted model again from its model_url when a job names it, and only an evicted one', async () => {
    const models = await folder();
    const served = await serveFiles({
      'a.safetensors': Buffer.from('lora a weights'),
      'b.safetensors': Buffer.from('lora b weights'),
    });
    const a = model('a7', `${served.base}/a.safetensors`);
    const b = model('b8', `${served.base}/b.safetensors`);
    const never = model('c9', `${served.base}/a.safetensors`);
    fakes = [await startFakeComfyUI({ stepDelayMs: 1, modelsDir: models })];
    // Room for one of the two 14-byte files.
    const budget = new ModelBudget({ shared: models, byServer: {} }, 20, new Set(), () => {});
    engine = createComfyuiEngine({
      servers: [createComfyClient({ url: fakes[0]!.url, name: 'gpu-a' })],
      compilers: COMPILERS,
      checkpoints: { 'sd1.5': SD15 },
      modelFiles: {
        folders: { shared: models, byServer: {} },
        maxBytes: 1_000_000,
        fetch: fetchModel,
        budget,
      },
    });
    await engine.start!();
    const ctx = () => ({ signal: AbortSignal.timeout(20_000), progress: () => {} });
    const load = (m: JobModel) =>
      engine!.run({ ...job('/load_model/v1', loadBody(m)), models: { [m.modelId]: m } }, ctx());
    await load(a);
    await load(b);
    const loras = path.join(models, 'loras');
    // b came last: a, the least recently used, went.
    expect((await readdir(loras)).filter((name) => !name.startsWith('.'))).toEqual([
      `${b.modelId}.safetensors`,
    ]);
    expect(budget.figures()).toEqual({ bytes: 14, budgetBytes: 20, evictions: 1 });
    const draw = (m: JobModel) =>
      job(
        '/sd/text2image/v1',
        {
          prompt: 'a fox',
          negative_prompt: '',
          width: 64,
          height: 64,
          num_inference_steps: 1,
          lora_models: [m.modelId],
        },
        { [m.modelId]: m },
      );
    // A job naming a: fetched again (and b goes to make room), then it runs with it.
    const asked = served.asked.length;
    expect((await engine.run(draw(a), ctx())).images).toHaveLength(1);
    expect(served.asked.slice(asked)).toEqual(['a.safetensors']);
    expect(await readFile(path.join(loras, `${a.modelId}.safetensors`), 'utf8')).toBe('lora a weights');
    // A model never loaded here is not fetched by a job: loading it is the owner's.
    await expect(engine.run(draw(never), ctx())).rejects.toThrow(
      `model '${never.modelId}' is not loaded on server gpu-a`,
    );
    expect(served.asked.slice(asked)).toEqual(['a.safetensors']);
  });
});
