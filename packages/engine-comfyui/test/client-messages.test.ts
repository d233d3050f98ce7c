import { readCapture } from '@imagegen/comfyui-fake';
import { describe, expect, it } from 'vitest';
import { parsePreview } from '../src/client/comfy-socket.ts';
import { type HistoryEntry, readHistoryEntry } from '../src/client/history-entry.ts';
import { describeRejection, type RejectionBody } from '../src/client/rejection.ts';

/**
 * What the client tells a task's owner: every recorded refusal of a real ComfyUI as one plain
 * sentence, and every recorded kind of history entry as its outcome.
 */

/** Every recorded 400 body, by scenario, and the sentence it must become. */
const REFUSALS: Readonly<Record<string, string>> = {
  'error-unknown-sampler':
    "KSampler (node 3): sampler_name 'not_a_sampler' is not one of the allowed values on server gpu-1",
  'error-missing-input': 'KSampler (node 3): the required input seed is missing on server gpu-1',
  'error-unknown-class_type': "node type 'NoSuchNode' (node 12) is not installed on server gpu-1",
  'error-value-below-min': 'KSampler (node 3): steps 0 is below the minimum 1 on server gpu-1',
  'error-value-wrong-type': "KSampler (node 3): steps 'two' is not a valid INT on server gpu-1",
  'error-link-to-missing-node':
    'KSampler (node 3): an input is linked to node 99, which is not in the graph on server gpu-1',
  'error-link-type-mismatch':
    'VAEDecode (node 8): vae takes VAE but is linked to a CLIP output (node 4 output 1) on server gpu-1',
  'error-unknown-checkpoint': "unknown checkpoint 'no_such_model.safetensors' on server gpu-1",
  'error-no-outputs': 'the graph has no output node on server gpu-1',
  'error-several-at-once':
    "KSampler (node 3): the required input seed is missing; KSampler (node 3): sampler_name 'not_a_sampler' is not one of the allowed values on server gpu-1",
  'error-no-prompt-key': 'the request carried no graph on server gpu-1',
  'error-missing-class_type': 'node 4 has no class_type on server gpu-1',
};

describe('refusals in plain words', () => {
  const bodies = readCapture<Record<string, { status: number; body: unknown }>>('error-bodies.json');

  it('covers every recorded refusal', () => {
    const refusals = Object.entries(bodies).filter(([, { status }]) => status === 400);
    expect(refusals.map(([name]) => name).sort()).toEqual(Object.keys(REFUSALS).sort());
  });

  for (const [name, sentence] of Object.entries(REFUSALS)) {
    it(name, () => {
      expect(describeRejection(bodies[name]!.body as RejectionBody, 'gpu-1')).toBe(sentence);
    });
  }

  it('names the node of an input check that failed, and a missing node pack', () => {
    const custom = {
      node_errors: {
        '10': {
          class_type: 'LoadImage',
          errors: [
            {
              type: 'custom_validation_failed',
              message: 'Custom validation failed for node',
              details: 'image - Invalid image file: x.png',
              extra_info: { input_name: 'image' },
            },
          ],
        },
      },
    };
    expect(describeRejection(custom, 'gpu-1')).toBe(
      'LoadImage (node 10): Invalid image file: x.png on server gpu-1',
    );
    const missingPack = {
      error: {
        type: 'missing_node_type',
        message: "Node 'IPAdapterAdvanced' not found",
        details: '',
        extra_info: { node_id: '12', class_type: 'IPAdapterAdvanced' },
      },
      node_errors: {},
    };
    expect(describeRejection(missingPack, 'gpu-1')).toBe(
      "node type 'IPAdapterAdvanced' (node 12) is not installed on server gpu-1",
    );
  });
});

describe('history entries read into outcomes', () => {
  const entry = (file: string): HistoryEntry =>
    Object.values(
      readCapture<{ response: { body: Record<string, unknown> } }>(file).response.body,
    )[0] as HistoryEntry;

  it('a success: the output files of the asked nodes', () => {
    expect(readHistoryEntry(entry('txt2img-02-get-history-txt2img.json'), ['9'], 'gpu-1')).toEqual({
      kind: 'success',
      files: [{ filename: 'harness_t2i_00001_.png', subfolder: '', type: 'output' }],
    });
  });

  it("a success of a text output node: PreviewAny's text, beside the other nodes' files", () => {
    const withText: HistoryEntry = {
      status: { status_str: 'success', completed: true, messages: [] },
      outputs: {
        '4': { text: ['a red fox sits in the snow'] },
        '9': { images: [{ filename: 'img_00001_.png', subfolder: '', type: 'output' }] },
      },
    };
    expect(readHistoryEntry(withText, ['4', '9'], 'gpu-1')).toEqual({
      kind: 'success',
      files: [{ filename: 'img_00001_.png', subfolder: '', type: 'output' }],
      texts: ['a red fox sits in the snow'],
    });
  });

  it('an output node that saved nothing of type output fails', () => {
    const withPreview: HistoryEntry = {
      status: { status_str: 'success', completed: true, messages: [] },
      outputs: {
        '9': { images: [{ filename: 'ComfyUI_temp_abcde_00001_.png', subfolder: '', type: 'temp' }] },
      },
    };
    expect(readHistoryEntry(withPreview, ['9'], 'gpu-1')).toEqual({
      kind: 'failed',
      message: 'output node 9 saved no image on server gpu-1',
    });
  });

  it('a runtime error: the node type and the exception', () => {
    expect(readHistoryEntry(entry('errors-15-get-history-runtime-error.json'), ['9'], 'gpu-1')).toEqual({
      kind: 'failed',
      message:
        'VAEDecode (node 8) failed on server gpu-1: RuntimeError: Given groups=1, weight of size [4, 4, 1, 1], expected input[1, 16, 8, 8] to have 4 channels, but got 16 channels instead',
    });
  });

  it("a real CPU server's out-of-memory: failed as out of memory, the allocator's first line", () => {
    expect(readHistoryEntry(entry('oom-get-history.json'), ['9'], 'cpu-1')).toEqual({
      kind: 'failed',
      outOfMemory: true,
      message:
        "EmptyLatentImage (node 5) ran out of memory on server cpu-1: RuntimeError: [enforce fail at alloc_cpu.cpp:118] err == 0. DefaultCPUAllocator: can't allocate memory: you tried to allocate 274877906944 bytes. Error code 12 (Cannot allocate memory)",
    });
  });

  it('an interruption', () => {
    expect(readHistoryEntry(entry('interrupt-08-get-history-interrupted-A.json'), ['9'], 'gpu-1')).toEqual({
      kind: 'failed',
      message: 'KSampler (node 3) was interrupted on server gpu-1',
    });
  });
});

describe('preview frames read', () => {
  const frame = (event: number, ...parts: Buffer[]) => {
    const header = Buffer.alloc(4);
    header.writeUInt32BE(event);
    return Buffer.concat([header, ...parts]);
  };
  const word = (n: number) => {
    const bytes = Buffer.alloc(4);
    bytes.writeUInt32BE(n);
    return bytes;
  };
  const image = Buffer.from([0xff, 0xd8, 0xff, 0xe0]);
  const withMetadata = (metadata: string) =>
    frame(4, word(Buffer.byteLength(metadata)), Buffer.from(metadata), image);

  it('takes the prompt from the metadata of event 4, else the prompt running', () => {
    const named = withMetadata(JSON.stringify({ prompt_id: 'p-1', image_type: 'image/jpeg' }));
    expect(parsePreview(named, 'p-2')).toEqual({ promptId: 'p-1', data: image, contentType: 'image/jpeg' });
    const unnamed = withMetadata(JSON.stringify({ image_type: 'image/png' }));
    expect(parsePreview(unnamed, 'p-2')).toEqual({ promptId: 'p-2', data: image, contentType: 'image/png' });
  });

  it('reads event 1 as JPEG (format 1) or PNG (format 2) of the prompt running', () => {
    expect(parsePreview(frame(1, word(1), image), 'p-3')).toEqual({
      promptId: 'p-3',
      data: image,
      contentType: 'image/jpeg',
    });
    expect(parsePreview(frame(1, word(2), image), undefined)?.contentType).toBe('image/png');
  });

  it('reads nothing from other events, frames cut short, unknown formats or unreadable metadata', () => {
    for (const bad of [
      Buffer.alloc(3),
      frame(1, word(1)),
      frame(1, word(3), image),
      frame(3, word(1), image),
      frame(4, word(100), Buffer.from('{}')),
      withMetadata('{not json'),
      withMetadata(JSON.stringify({ prompt_id: 'p-1', image_type: 'image/webp' })),
      withMetadata(JSON.stringify({ prompt_id: 'p-1', image_type: 'image/jpeg' })).subarray(0, 8 + 41),
    ]) {
      expect(parsePreview(bad, 'p-1')).toBeUndefined();
    }
  });
});
