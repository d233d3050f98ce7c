import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { ApiPrompt } from '@imagegen/engine-comfyui/engine';
import { describe, expect, it } from 'vitest';
import { capturedObjectInfo } from '../src/fake-comfyui/captures.ts';
import { pyNumberStr, pyStr } from '../src/validation/python-values.ts';
import { SERVER_ERROR_TEXT, validatePrompt } from '../src/validation/validate-prompt.ts';

const CAPTURES = path.resolve(import.meta.dirname, '../comfyui-captures');
const objectInfo = capturedObjectInfo();

interface Exchange {
  request: { method: string; path: string; body: unknown };
  response: { status: number; body: unknown };
}
const exchanges = (kind: string) =>
  readdirSync(CAPTURES)
    .filter((file) => file.includes(kind) && file.endsWith('.json'))
    .map((file) => ({
      file,
      exchange: JSON.parse(readFileSync(path.join(CAPTURES, file), 'utf8')) as Exchange,
    }));
const postPrompts = exchanges('post-prompt');

/**
 * The server's input folder while it was recorded: what `/object_info` listed, plus what the
 * recorded uploads stored (the img2img scenario uploads its picture before it submits).
 */
const inputFolder = new Set([
  ...(objectInfo['LoadImage']!.input.required!['image']![0] as string[]),
  ...exchanges('post-upload-image')
    .filter((u) => u.exchange.response.status === 200)
    .map((u) => (u.exchange.response.body as { name: string }).name),
]);
const recordedServer = {
  fileExists: (name: string, folder: string) => folder === 'input' && inputFolder.has(name),
};

/** The recorded txt2img graph (checkpoint, two prompts, empty latent, KSampler, decode, save). */
const txt2img = (): Record<string, { class_type: string; inputs: Record<string, unknown> }> =>
  structuredClone(
    postPrompts.find((p) => p.file.startsWith('txt2img-01'))!.exchange.request.body as {
      prompt: Record<string, { class_type: string; inputs: Record<string, unknown> }>;
    },
  ).prompt;

const rejected = (prompt: unknown) => {
  const result = validatePrompt(objectInfo, { prompt });
  if (result.status !== 400) throw new Error(`expected a 400, got ${JSON.stringify(result)}`);
  return result.body;
};

describe('validatePrompt replays the recorded POST /prompt exchanges of ComfyUI 0.3.64', () => {
  it('finds every recorded exchange, errors and accepted prompts alike', () => {
    expect(postPrompts.length).toBeGreaterThanOrEqual(26);
    expect(inputFolder).toContain('harness_gradient.png');
    expect(
      postPrompts.every((p) => p.exchange.request.method === 'POST' && p.exchange.request.path === '/prompt'),
    ).toBe(true);
  });

  for (const { file, exchange } of postPrompts) {
    it(`answers ${file} with the recorded status and body`, () => {
      const { body } = exchange.request;
      const expected = exchange.response;
      if (typeof body === 'string') {
        // Recorded as raw text: a body that is not JSON never reaches validation, aiohttp answers 500.
        expect(() => JSON.parse(body)).toThrow();
        expect(expected).toEqual({ ...expected, status: 500, body: SERVER_ERROR_TEXT });
        return;
      }
      const result = validatePrompt(objectInfo, body, recordedServer);
      expect(result.status).toBe(expected.status);
      if (result.status === 200) {
        expect(result.nodeErrors).toEqual((expected.body as { node_errors: unknown }).node_errors);
      } else {
        expect(result.body).toEqual(expected.body);
      }
    });
  }
});

describe('validatePrompt beyond the recordings', () => {
  it('accepts a prompt when one output validates, reporting the failed output in node_errors (the trap)', () => {
    const prompt = txt2img();
    prompt['10'] = { class_type: 'SaveImage', inputs: { filename_prefix: 'second', images: ['11', 0] } };
    prompt['11'] = { class_type: 'VAEDecode', inputs: { samples: ['3', 0], vae: ['4', 1] } };
    const result = validatePrompt(objectInfo, { prompt });
    expect(result.status).toBe(200);
    if (result.status !== 200) return;
    expect(result.outputs).toEqual(['9']);
    expect(Object.keys(result.nodeErrors)).toEqual(['11']);
    expect(result.nodeErrors['11']).toMatchObject({
      class_type: 'VAEDecode',
      dependent_outputs: ['10'],
      errors: [
        { type: 'return_type_mismatch', details: 'vae, received_type(CLIP) mismatch input_type(VAE)' },
      ],
    });
  });

  it('reports a value above max with the bound as Python prints it, int or float', () => {
    const prompt = txt2img();
    prompt['5']!.inputs['width'] = 20000;
    prompt['3']!.inputs['cfg'] = 150;
    const body = rejected(prompt);
    expect(body.node_errors['5']!.errors[0]).toMatchObject({
      type: 'value_bigger_than_max',
      message: 'Value 20000 bigger than max of 16384',
      details: 'width',
      extra_info: { input_name: 'width', received_value: 20000 },
    });
    expect(body.node_errors['3']!.errors[0]).toMatchObject({
      type: 'value_bigger_than_max',
      message: 'Value 150.0 bigger than max of 100.0',
      details: 'cfg',
    });
    expect(body.error.details).toBe('');
    expect(body.node_errors['3']!.dependent_outputs).toEqual(['9']);
  });

  it("converts widget values as ComfyUI does and queues the converted graph, leaving the caller's untouched", () => {
    const prompt = txt2img();
    prompt['3']!.inputs['steps'] = ' 2 ';
    prompt['3']!.inputs['cfg'] = '7.5';
    prompt['6']!.inputs['text'] = 42;
    const result = validatePrompt(objectInfo, { prompt });
    expect(result.status).toBe(200);
    if (result.status !== 200) return;
    expect(result.prompt['3']!.inputs).toMatchObject({ steps: 2, cfg: 7.5 });
    expect(result.prompt['6']!.inputs['text']).toBe('42');
    expect(prompt['3']!.inputs['steps']).toBe(' 2 ');
  });

  it('reports an output node whose own link points nowhere as an exception during validation', () => {
    const prompt = txt2img();
    prompt['9']!.inputs['images'] = ['99', 0];
    const body = rejected(prompt);
    expect(body.error.details).toBe("Exception when validating node: '99'");
    expect(body.node_errors).toEqual({
      '9': {
        class_type: 'SaveImage',
        dependent_outputs: ['9'],
        errors: [
          {
            type: 'exception_during_validation',
            message: 'Exception when validating node',
            details: "'99'",
            extra_info: {
              exception_type: 'KeyError',
              traceback: [
                '  File "/opt/comfy/ComfyUI/execution.py", line 1010, in validate_prompt\n    m = await validate_inputs(prompt_id, prompt, o, validated)\n        ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n',
                '  File "/opt/comfy/ComfyUI/execution.py", line 788, in validate_inputs\n    o_class_type = prompt[o_id][\'class_type\']\n                   ~~~~~~^^^^^^\n',
              ],
            },
          },
        ],
      },
    });
  });

  it('reports a link to an output slot the node does not have as an IndexError of the linking node', () => {
    const prompt = txt2img();
    prompt['3']!.inputs['model'] = ['4', 5];
    const body = rejected(prompt);
    expect(body.node_errors['3']!.errors[0]).toMatchObject({
      type: 'exception_during_inner_validation',
      details: 'tuple index out of range',
      extra_info: { input_name: 'samples', exception_type: 'IndexError', linked_node: ['3', 0] },
    });
  });

  it('reports a link that is not a pair, and a node without inputs', () => {
    const prompt = txt2img();
    prompt['8']!.inputs['vae'] = ['4', 2, 0];
    const body = rejected(prompt);
    expect(body.node_errors['8']!.errors).toEqual([
      {
        type: 'bad_linked_input',
        message: 'Bad linked input, must be a length-2 list of [node_id, slot_index]',
        details: 'vae',
        extra_info: {
          input_name: 'vae',
          input_config: ['VAE', expect.any(Object)],
          received_value: ['4', 2, 0],
        },
      },
    ]);
    const noInputs = txt2img() as Record<string, unknown>;
    noInputs['5'] = { class_type: 'EmptyLatentImage' };
    const error = rejected(noInputs).node_errors['5']!.errors[0]!;
    expect(error).toMatchObject({ type: 'exception_during_inner_validation', details: "'inputs'" });
    expect((error.extra_info['traceback'] as string[])[1]).toContain("inputs = prompt[unique_id]['inputs']");
  });

  it('checks a LoadImage file by existence, not by the list, as its VALIDATE_INPUTS does', () => {
    const prompt = {
      '1': { class_type: 'LoadImage', inputs: { image: 'uploaded.png' } },
      '2': { class_type: 'SaveImage', inputs: { filename_prefix: 'x', images: ['1', 0] } },
    };
    expect(rejected(prompt).node_errors['1']!.errors).toEqual([
      {
        type: 'custom_validation_failed',
        message: 'Custom validation failed for node',
        details: 'image - Invalid image file: uploaded.png',
        extra_info: { input_name: 'image' },
      },
    ]);
    const seen: unknown[] = [];
    const result = validatePrompt(
      objectInfo,
      { prompt: { ...prompt, '1': { class_type: 'LoadImage', inputs: { image: 'uploaded.png [input]' } } } },
      {
        fileExists: (...args) => {
          seen.push(args);
          return true;
        },
      },
    );
    expect(result.status).toBe(200);
    expect(seen).toEqual([['uploaded.png', 'input', ['example.png']]]);
    expect(
      validatePrompt(objectInfo, {
        prompt: { ...prompt, '1': { ...prompt['1'], inputs: { image: 'example.png' } } },
      }).status,
    ).toBe(200);
  });

  it('lists a short COMBO in the message and the input config, and an unknown class name as invalid_prompt', () => {
    const prompt = txt2img();
    prompt['5'] = {
      class_type: 'LatentUpscale',
      inputs: { samples: ['3', 0], upscale_method: 'nope', width: 64, height: 64, crop: 'disabled' },
    };
    prompt['8']!.inputs['samples'] = ['5', 0];
    const error = rejected(prompt).node_errors['5']!.errors[0]!;
    expect(error.details).toBe(
      "upscale_method: 'nope' not in ['nearest-exact', 'bilinear', 'area', 'bicubic', 'bislerp']",
    );
    // ComfyUI sends (type, options) and an input declared without options gets an empty dict.
    expect(error.extra_info['input_config']).toEqual([
      objectInfo['LatentUpscale']!.input.required!['upscale_method']![0],
      {},
    ]);
    expect(rejected({ '1': { class_type: 7, inputs: {} } }).error).toEqual({
      type: 'invalid_prompt',
      message: 'Cannot execute because node 7 does not exist.',
      details: "Node ID '#1'",
      extra_info: {},
    });
  });

  it('runs only the partial execution targets, and finds no outputs when none is a target', () => {
    const prompt = txt2img();
    expect(validatePrompt(objectInfo, { prompt, partial_execution_targets: ['9'] }).status).toBe(200);
    expect(validatePrompt(objectInfo, { prompt, partial_execution_targets: ['3'] })).toEqual({
      status: 400,
      body: {
        error: { type: 'prompt_no_outputs', message: 'Prompt has no outputs', details: '', extra_info: {} },
        node_errors: {},
      },
    });
  });

  it('answers 500 where the real server raises outside validation', () => {
    for (const body of [
      5,
      null,
      ['prompt'],
      { prompt: [1] },
      { prompt: { '1': 5 } },
      { prompt: {}, number: 'x' },
    ]) {
      expect(validatePrompt(objectInfo, body)).toEqual({ status: 500, body: SERVER_ERROR_TEXT });
    }
    expect(validatePrompt(objectInfo, ['workflow'])).toMatchObject({
      status: 400,
      body: { error: { type: 'no_prompt' } },
    });
  });

  it('returns the graph it validated typed as the client sends it', () => {
    const result = validatePrompt(objectInfo, { prompt: txt2img() });
    const graph: ApiPrompt | undefined = result.status === 200 ? result.prompt : undefined;
    expect(graph?.['9']?.class_type).toBe('SaveImage');
  });
});

describe('Python value formatting', () => {
  it('prints floats as repr() does', () => {
    const cases: [number, string][] = [
      [7, '7.0'],
      [0.1, '0.1'],
      [1e-5, '1e-05'],
      [0.0001, '0.0001'],
      [1e16, '1e+16'],
      [123456789012345.6, '123456789012345.6'],
      [-2.5, '-2.5'],
      [1.5e-7, '1.5e-07'],
    ];
    expect(cases.map(([n]) => pyNumberStr({ value: n, float: true }))).toEqual(cases.map(([, text]) => text));
  });

  it('prints values as str() does, quoting strings inside lists as repr() does', () => {
    expect(pyStr([null, true, 'a', "it's", 2])).toBe(`[None, True, 'a', "it's", 2]`);
    expect(pyStr({ a: 1.5 })).toBe("{'a': 1.5}");
    // Escapes as CPython's repr: no-break space and line separator included, an emoji kept.
    expect(pyStr(['\u00a0', '\u2028', 'a\u007f', '\u{1f600}'])).toBe(
      String.raw`['\xa0', '\u2028', 'a\x7f', '😀']`,
    );
  });
});
