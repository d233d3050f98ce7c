import { type FakeComfyUI, startFakeComfyUI, suiteModelFiles } from '@imagegen/comfyui-fake';
import {
  COMPILERS,
  createComfyClient,
  createComfyuiEngine,
  parseCheckpointSettings,
} from '@imagegen/engine-comfyui/engine';
import { createEngineRegistry, type Engine } from '@imagegen/engines';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOwner } from '../../src/auth/accounts.ts';
import { apiCalls } from '../support/api-calls.ts';
import { type FileServer, type LoopbackApi, serveFiles, startLoopbackApi } from '../support/loopback.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { noiseImage } from '../support/test-images.ts';

/**
 * Model families at submission, through the real API (PostgreSQL, HTTP, the worker) and the
 * comfyui engine on a fake ComfyUI: a model whose family is known before it runs (a built-in id,
 * or an id COMFYUI_CHECKPOINTS declares) and that the pipeline's adapters do not fit is answered
 * 422 at `model_id` and nothing is queued; the right family runs; an SDXL model on an SD1.5 path
 * runs with SDXL's own controlnet; an id whose family only its file knows still fails its task.
 * And COMFYUI_CHECKPOINTS' inpainting role: the inpainting path loads it, text2image the base.
 */

const COMFYUI_CHECKPOINTS = [
  'sd1.5=random-sd15.safetensors',
  'my-xl:sdxl=juggernautXL.safetensors',
  'sdxl:inpainting=sd_xl_inpaint_0.1.safetensors',
].join(',');
const SETTINGS = parseCheckpointSettings(COMFYUI_CHECKPOINTS);

let db: TestDatabase;
let api: LoopbackApi;
let fake: FakeComfyUI;
let pictures: FileServer;
let engine: Engine;
let key: string;

beforeAll(async () => {
  const models = await suiteModelFiles(SETTINGS.checkpoints);
  const add = (folder: string, ...files: string[]) => {
    models[folder] = [...new Set([...(models[folder] ?? []), ...files])].sort();
  };
  add(
    'checkpoints',
    'sd_xl_base_1.0.safetensors',
    'juggernautXL.safetensors',
    'sd_xl_inpaint_0.1.safetensors',
  );
  add('controlnet', 'controlnet-canny-sdxl-1.0.safetensors', 'control_v11p_sd15_canny.pth');
  fake = await startFakeComfyUI({ models, stepDelayMs: 1, name: 'gpu-a' });
  const png = await noiseImage(64, 64, 'png');
  pictures = await serveFiles({ '/face.png': ['image/png', png], '/photo.png': ['image/png', png] });

  db = await createTestDatabase();
  key = (await createOwner(db.pool, { name: 'families', plan: 'UNLIMITED' })).apiKey;
  engine = createComfyuiEngine({
    servers: [createComfyClient({ url: fake.url, name: fake.name, requestTimeoutMs: 2_000 })],
    compilers: COMPILERS,
    ...SETTINGS,
  });
  const engines = createEngineRegistry([engine], { enabled: ['comfyui'], pinned: {} });
  api = await startLoopbackApi({ pool: db.pool, engines, worker: { attemptTimeoutMs: 20_000 } });
});

afterAll(async () => {
  await api?.close();
  await engine?.close?.();
  await fake?.close();
  await pictures?.close();
  await db?.drop();
});

const { call, submit, settle } = apiCalls(() => api.url);

const FACELOCK = {
  prompt: 'a portrait in a garden',
  negative_prompt: 'blurry',
  num_inference_steps: 2,
  samples: 1,
  guidance_scale: 5,
  width: 64,
  height: 64,
};
const face = () => ({ ...FACELOCK, input_face: `${pictures.url}/face.png` });
const TEXT = { prompt: 'a house', negative_prompt: '', num_inference_steps: 2, width: 64, height: 64 };

const taskCount = async () => Number((await db.pool.query('SELECT count(*) AS n FROM tasks')).rows[0].n);

/** The graphs the fake ran, as JSON text. */
const history = async () => JSON.stringify(await (await fetch(`${fake.url}/history`)).json());

describe('a model family the pipeline does not fit', () => {
  const refused: [string, string, () => Record<string, unknown>, RegExp][] = [
    [
      'an SDXL model on /facelock/v1',
      '/facelock/v1',
      () => ({ ...face(), model_id: 'sdxl' }),
      /^'sdxl' is an SDXL model, and IP-Adapter FaceID Plus V2 and its LoRA fit SD1\.5 models only; send an SD1\.5 model here, or use \/facelock\/v2/,
    ],
    [
      'an id COMFYUI_CHECKPOINTS declares SDXL on /facelock/v1',
      '/facelock/v1',
      () => ({ ...face(), model_id: 'my-xl' }),
      /^'my-xl' is an SDXL model, and IP-Adapter FaceID Plus V2/,
    ],
    [
      'an SD1.5 model on /facelock/v2',
      '/facelock/v2',
      () => ({ ...face(), model_id: 'sd1.5' }),
      /^'sd1\.5' is an SD1\.5 model, and PuLID's weights fit SDXL models only; send an SDXL model here, or use \/facelock\/v1/,
    ],
  ];

  it.each(refused)(
    'is answered 422 at model_id: %s, and nothing is queued',
    async (_name, path, body, msg) => {
      const before = await taskCount();
      const answer = await call('POST', path, key, body());
      expect(answer.status, JSON.stringify(answer.body)).toBe(422);
      expect(answer.body).toEqual({
        detail: [
          { loc: ['body', 'model_id'], msg: expect.stringMatching(msg), type: 'value_error.model_family' },
        ],
      });
      expect(await taskCount()).toBe(before);
    },
  );

  it("an SD1.5 path's adapter on an SDXL model is answered 422 at ip_adapter", async () => {
    const answer = await call('POST', '/sd/text2image/v1', key, {
      ...TEXT,
      model_id: 'sdxl',
      ip_adapter: ['ip-adapter_sd15'],
      ip_adapter_image: `${pictures.url}/face.png`,
    });
    expect(answer.status).toBe(422);
    expect(answer.body).toEqual({
      detail: [
        {
          loc: ['body', 'ip_adapter'],
          msg: expect.stringContaining(
            "'ip-adapter_sd15' is made for another model family than this model's",
          ),
          type: 'value_error.model_family',
        },
      ],
    });
  });

  it('leaves the Idempotency-Key of a refused submission free', async () => {
    const post = (body: Record<string, unknown>) =>
      fetch(`${api.url}/facelock/v1`, {
        method: 'POST',
        headers: { 'API-Key': key, 'content-type': 'application/json', 'idempotency-key': 'family-1' },
        body: JSON.stringify(body),
      });
    expect((await post({ ...face(), model_id: 'sdxl' })).status).toBe(422);
    const accepted = await post({ ...face(), model_id: 'sd1.5' });
    expect(accepted.status).toBe(200);
    const { id } = (await accepted.json()) as { id: string };
    expect((await settle('/facelock/v1', id, key)).status).toBe('SUCCESS');
  });
});

describe('the right family', () => {
  it('is accepted and runs: SD1.5 on /facelock/v1, a declared SDXL id on /facelock/v2', async () => {
    for (const [path, model] of [
      ['/facelock/v1', 'sd1.5'],
      ['/facelock/v2', 'my-xl'],
    ] as const) {
      const id = await submit(path, { ...face(), model_id: model }, key);
      const status = await settle(path, id, key);
      expect(status.status, `${path} ${JSON.stringify(status)}`).toBe('SUCCESS');
    }
    expect(await history()).toContain('"ckpt_name":"juggernautXL.safetensors"');
  });

  it('an SDXL model with a controlnet on /sd/text2image/v1 runs with the SDXL controlnet', async () => {
    const id = await submit(
      '/sd/text2image/v1',
      { ...TEXT, model_id: 'sdxl', controlnets: ['canny'], control_image: `${pictures.url}/photo.png` },
      key,
    );
    const status = await settle('/sd/text2image/v1', id, key);
    expect(status.status, JSON.stringify(status)).toBe('SUCCESS');
    const ran = await history();
    expect(ran).toContain('"control_net_name":"controlnet-canny-sdxl-1.0.safetensors"');
    expect(ran).not.toContain('control_v11p_sd15_canny.pth');
  });

  it('an id whose family only its file knows is queued, and its task fails in plain words', async () => {
    // Of model-id form: one of the owner's models, resolved only by the worker (this owner has none).
    const unknown = '0123456789abcdef0123456789abcdef';
    const id = await submit('/facelock/v2', { ...face(), model_id: unknown }, key);
    const status = await settle('/facelock/v2', id, key);
    expect(status.status).toBe('FAILURE');
    expect(String(status.error ?? status.message)).toMatch(new RegExp(`^model_id: .*'${unknown}'`));
  });
});

describe('the inpainting role', () => {
  it('is what /sdxl/inpainting/v1 loads; text2image keeps the base', async () => {
    const inpaint = await submit(
      '/sdxl/inpainting/v1',
      { ...TEXT, init_image: `${pictures.url}/photo.png`, mask_image: `${pictures.url}/photo.png` },
      key,
    );
    expect((await settle('/sdxl/inpainting/v1', inpaint, key)).status).toBe('SUCCESS');
    expect(await history()).toContain('"ckpt_name":"sd_xl_inpaint_0.1.safetensors"');
    const before = (await history()).split('sd_xl_base_1.0.safetensors').length;
    const text = await submit('/sdxl/text2image/v1', { ...TEXT, prompt: 'a tower' }, key);
    expect((await settle('/sdxl/text2image/v1', text, key)).status).toBe('SUCCESS');
    expect((await history()).split('sd_xl_base_1.0.safetensors').length).toBeGreaterThan(before);
  });
});
