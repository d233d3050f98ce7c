import { ALL_NODE_PACKS, type ApiNode, compilerFor, type ObjectInfo } from '@imagegen/engine-comfyui/engine';
import { afterEach, describe, expect, it } from 'vitest';
import { modelFilesOf } from '../src/comfyui-pipeline-suite.ts';
import { packDefinitions } from '../src/fake-comfyui/captures.ts';
import { type FakeComfyUI, startFakeComfyUI } from '../src/fake-comfyui/index.ts';

/**
 * The fake ComfyUI with custom node packs installed: their definitions (written from each pack's
 * source under `comfyui-packs/`) answered in /object_info and held to the same validation as core
 * nodes; a fake without a pack refuses its classes as a bare ComfyUI does.
 */

let fake: FakeComfyUI | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

/** The /faceswap/v1 graph (ReActor) on the uploads `photo.png` and `face.png`, with some inputs changed. */
function faceSwap(inputs: Record<string, unknown> = {}): Record<string, ApiNode> {
  const { prompt } = compilerFor('/faceswap/v1')!.compile({
    input: {},
    seed: 1,
    images: { input_image: 'photo.png', input_face: 'face.png' },
    filenamePrefix: 'packs/swap',
    checkpoints: {},
  });
  return Object.fromEntries(
    Object.entries(prompt).map(([id, node]) => [
      id,
      node.class_type === 'ReActorFaceSwap' ? { ...node, inputs: { ...node.inputs, ...inputs } } : node,
    ]),
  );
}

/** The id of the ReActor node of that graph. */
const SWAP_NODE = Object.entries(faceSwap()).find(([, node]) => node.class_type === 'ReActorFaceSwap')![0];

async function upload(server: FakeComfyUI, name: string) {
  const form = new FormData();
  const png = Buffer.from(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
    'base64',
  );
  form.append('image', new Blob([png], { type: 'image/png' }), name);
  const response = await fetch(`${server.url}/upload/image`, { method: 'POST', body: form });
  expect(response.status).toBe(200);
}

/** What POST /prompt answers, as far as these tests read it. */
interface PromptAnswer {
  prompt_id?: string;
  error?: { type: string; message: string };
  node_errors: Record<string, { errors: { type: string; extra_info: { input_name: string } }[] }>;
}

async function post(server: FakeComfyUI, prompt: Record<string, ApiNode>) {
  const response = await fetch(`${server.url}/prompt`, { method: 'POST', body: JSON.stringify({ prompt }) });
  return { status: response.status, body: (await response.json()) as PromptAnswer };
}

describe('the fake ComfyUI with node packs', () => {
  it('answers every pack definition file in /object_info, by default', async () => {
    fake = await startFakeComfyUI({ stepDelayMs: 0 });
    const info = (await (await fetch(`${fake.url}/object_info`)).json()) as Record<string, unknown>;
    for (const pack of ALL_NODE_PACKS) {
      for (const classType of Object.keys(packDefinitions(pack).object_info))
        expect(info, classType).toHaveProperty(classType);
    }
    expect(info).toHaveProperty('KSampler');
  });

  it("lists a pack loader's model folder from the files it is given", async () => {
    fake = await startFakeComfyUI({ stepDelayMs: 0, models: { ipadapter: ['ip-adapter_sd15.safetensors'] } });
    const info = (await (await fetch(`${fake.url}/object_info/IPAdapterModelLoader`)).json()) as ObjectInfo;
    expect(info['IPAdapterModelLoader']?.input.required?.['ipadapter_file']?.[0]).toEqual([
      'ip-adapter_sd15.safetensors',
    ]);
  });

  it('runs a pack graph whose inputs the pack accepts, and refuses a value outside its list', async () => {
    fake = await startFakeComfyUI({
      stepDelayMs: 0,
      models: modelFilesOf(faceSwap()),
    });
    await upload(fake, 'photo.png');
    await upload(fake, 'face.png');
    expect((await post(fake, faceSwap())).status).toBe(200);
    const refused = await post(fake, faceSwap({ facedetection: 'haar-cascade' }));
    expect(refused.status).toBe(400);
    expect(refused.body.node_errors[SWAP_NODE]?.errors[0]).toMatchObject({
      type: 'value_not_in_list',
      extra_info: { input_name: 'facedetection' },
    });
    const missingModel = await post(fake, faceSwap({ swap_model: 'not-there.onnx' }));
    expect(missingModel.body.node_errors[SWAP_NODE]?.errors[0]?.extra_info.input_name).toBe('swap_model');
  });

  it("refuses a pack's class as unknown when the pack is not installed", async () => {
    fake = await startFakeComfyUI({ stepDelayMs: 0, packs: [] });
    await upload(fake, 'photo.png');
    await upload(fake, 'face.png');
    const refused = await post(fake, faceSwap());
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ type: 'invalid_prompt' });
    expect(refused.body.error?.message).toContain('ReActorFaceSwap');
  });
});

describe('the fake ComfyUI showing text', () => {
  it("answers PreviewAny's text in history, as ComfyUI shows a caption node's STRING", async () => {
    fake = await startFakeComfyUI({ stepDelayMs: 0 });
    await upload(fake, 'photo.png');
    const prompt: Record<string, ApiNode> = {
      '1': { class_type: 'LoadImage', inputs: { image: 'photo.png' } },
      '2': {
        class_type: 'DownloadAndLoadFlorence2Model',
        inputs: { model: 'microsoft/Florence-2-large', precision: 'fp32', attention: 'sdpa' },
      },
      '3': {
        class_type: 'Florence2Run',
        inputs: {
          image: ['1', 0],
          florence2_model: ['2', 0],
          text_input: '',
          task: 'more_detailed_caption',
          fill_mask: false,
        },
      },
      '4': { class_type: 'PreviewAny', inputs: { source: ['3', 2] } },
    };
    const submitted = await post(fake, prompt);
    expect(submitted.status).toBe(200);
    const id = String(submitted.body.prompt_id);
    let entry: { outputs: Record<string, unknown> } | undefined;
    for (let n = 0; n < 200 && !entry; n++) {
      const history = (await (await fetch(`${fake.url}/history/${id}`)).json()) as Record<
        string,
        typeof entry
      >;
      entry = history[id];
      if (!entry) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(entry?.outputs['4']).toEqual({ text: ['a description by Florence2Run of a 1x1 picture'] });
  });
});
