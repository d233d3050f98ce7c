import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ApiNode } from '../../src/comfyui/contracts.ts';
import { NODE_PACKS, type NodePack } from '../../src/comfyui/node-packs.ts';
import { type FakeComfyUI, startFakeComfyUI } from '../../src/testing/fake-comfyui/index.ts';

/**
 * The fake ComfyUI with custom node packs installed: their definitions (written from each pack's
 * source under `comfyui-packs/`) answered in /object_info and held to the same validation as core
 * nodes; a fake without a pack refuses its classes as a bare ComfyUI does.
 */

const PACKS = path.resolve(import.meta.dirname, '../../comfyui-packs');

let fake: FakeComfyUI | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

/** A graph that swaps a face with ReActor and saves the result. */
function faceSwap(inputs: Record<string, unknown> = {}): Record<string, ApiNode> {
  return {
    '1': { class_type: 'LoadImage', inputs: { image: 'photo.png' } },
    '2': { class_type: 'LoadImage', inputs: { image: 'face.png' } },
    '3': {
      class_type: 'ReActorFaceSwap',
      inputs: {
        enabled: true,
        input_image: ['1', 0],
        source_image: ['2', 0],
        swap_model: 'inswapper_128.onnx',
        facedetection: 'retinaface_resnet50',
        face_restore_model: 'none',
        face_restore_visibility: 1,
        codeformer_weight: 0.5,
        detect_gender_input: 'no',
        detect_gender_source: 'no',
        input_faces_index: '0',
        source_faces_index: '0',
        console_log_level: 1,
        ...inputs,
      },
    },
    '4': { class_type: 'SaveImage', inputs: { images: ['3', 0], filename_prefix: 'packs/swap' } },
  };
}

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

async function post(server: FakeComfyUI, prompt: Record<string, ApiNode>) {
  const response = await fetch(`${server.url}/prompt`, { method: 'POST', body: JSON.stringify({ prompt }) });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

describe('the fake ComfyUI with node packs', () => {
  it('answers every pack definition file in /object_info, by default', async () => {
    fake = await startFakeComfyUI({ stepDelayMs: 0 });
    const info = (await (await fetch(`${fake.url}/object_info`)).json()) as Record<string, unknown>;
    for (const pack of Object.keys(NODE_PACKS) as NodePack[]) {
      const file = JSON.parse(readFileSync(path.join(PACKS, NODE_PACKS[pack].definitions), 'utf8'));
      for (const classType of Object.keys(file.object_info))
        expect(info, classType).toHaveProperty(classType);
    }
    expect(info).toHaveProperty('KSampler');
  });

  it("lists a pack loader's model folder from the files it is given", async () => {
    fake = await startFakeComfyUI({ stepDelayMs: 0, models: { ipadapter: ['ip-adapter_sd15.safetensors'] } });
    const info = (await (await fetch(`${fake.url}/object_info/IPAdapterModelLoader`)).json()) as Record<
      string,
      any
    >;
    expect(info.IPAdapterModelLoader.input.required.ipadapter_file[0]).toEqual([
      'ip-adapter_sd15.safetensors',
    ]);
  });

  it('runs a pack graph whose inputs the pack accepts, and refuses a value outside its list', async () => {
    fake = await startFakeComfyUI({ stepDelayMs: 0, models: { insightface: ['inswapper_128.onnx'] } });
    await upload(fake, 'photo.png');
    await upload(fake, 'face.png');
    expect((await post(fake, faceSwap())).status).toBe(200);
    const refused = await post(fake, faceSwap({ facedetection: 'haar-cascade' }));
    expect(refused.status).toBe(400);
    expect(refused.body.node_errors['3'].errors[0]).toMatchObject({
      type: 'value_not_in_list',
      extra_info: { input_name: 'facedetection' },
    });
    const missingModel = await post(fake, faceSwap({ swap_model: 'not-there.onnx' }));
    expect(missingModel.body.node_errors['3'].errors[0].extra_info.input_name).toBe('swap_model');
  });

  it("refuses a pack's class as unknown when the pack is not installed", async () => {
    fake = await startFakeComfyUI({ stepDelayMs: 0, packs: [] });
    await upload(fake, 'photo.png');
    await upload(fake, 'face.png');
    const refused = await post(fake, faceSwap());
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ type: 'invalid_prompt' });
    expect(refused.body.error.message).toContain('ReActorFaceSwap');
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
    let entry: Record<string, any> | undefined;
    for (let n = 0; n < 200 && !entry; n++) {
      entry = ((await (await fetch(`${fake.url}/history/${id}`)).json()) as Record<string, any>)[id];
      if (!entry) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(entry?.outputs['4']).toEqual({ text: ['a description by Florence2Run of a 1x1 picture'] });
  });
});
