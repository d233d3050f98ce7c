import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { compileRequestValidator, endpointByPath, endpoints, notedDescription } from '@imagegen/contract';
import { describe, expect, it } from 'vitest';
import {
  applies,
  bodyOf,
  type FieldSpec,
  fieldsOf,
  isRequired,
  pipelineOf,
  pipelines,
  problemsOf,
  REFINES,
  typedValue,
} from '../src/components/playground/form-model.ts';
import { shippedCatalog } from './support/engine-catalog.ts';

const BUILD = path.resolve(import.meta.dirname, '../build');

function fieldOf(pipeline: string, name: string): FieldSpec {
  const found = fieldsOf(pipelineOf(pipeline)!).find((field) => field.name === name);
  if (!found) throw new Error(`${pipeline} has no field ${name}`);
  return found;
}

/** The fields of `pipeline` shown for `values`. */
function shown(pipeline: string, values: Record<string, unknown>): string[] {
  const endpoint = pipelineOf(pipeline)!;
  const fields = fieldsOf(endpoint);
  const body = bodyOf(endpoint, fields, values);
  return fields.filter((field) => applies(endpoint, field, body, fields)).map((field) => field.name);
}

describe("the playground's form, from the contract", () => {
  it('offers every task-creating path of the contract, each with one field per request property', () => {
    const paths = endpoints.filter((e) => e.status && e.request).map((e) => e.path);
    expect(pipelines().map((e) => e.path)).toEqual(paths);
    expect(paths).toContain('/train_model/v1');
    for (const endpoint of pipelines()) {
      const properties = Object.keys((endpoint.request as { properties: object }).properties);
      const fields = fieldsOf(endpoint);
      expect(fields.map((field) => field.name)).toEqual(properties);
      // Every field has a control of its own: none falls back to raw JSON.
      expect(
        fields.filter((field) => field.kind === 'json').map((f) => `${endpoint.path} ${f.name}`),
      ).toEqual([]);
    }
  });

  it('appends the notes of the engine catalogue the docs print, as the API reference does', async () => {
    const { notes } = await shippedCatalog();
    const note = notes.fields?.safety_checker;
    expect(note).toContain('nsfwjs');
    const endpoint = pipelineOf('/superresolution/v1')!;
    const noted = fieldsOf(endpoint, notes).find((field) => field.name === 'safety_checker');
    expect(noted?.description).toBe(
      `${fieldOf('/superresolution/v1', 'safety_checker').description} ${note}`,
    );
    expect(notedDescription(endpoint, notes).split('\n\n')[0]).toBe(
      `${endpoint.description.split('\n\n')[0]} ${notes.pipelines?.['/superresolution/v1']}`,
    );
    // Notes scoped to the request schema of the pipeline on screen, after its field's description.
    const scoped = notes.schemaFields?.UpscalerPrompt?.type;
    expect(scoped).toContain('`variation` fails the task');
    expect(
      fieldsOf(pipelineOf('/upscaler/v1')!, notes).find((field) => field.name === 'type')?.description,
    ).toBe(`${fieldOf('/upscaler/v1', 'type').description} ${scoped}`);
  });

  it('gives each field the control, bounds, allowed values and default its schema says', () => {
    expect(fieldOf('/sd/text2image/v1', 'prompt')).toMatchObject({ kind: 'longtext', required: true });
    expect(fieldOf('/sd/text2image/v1', 'samples')).toMatchObject({
      kind: 'integer',
      required: false,
      bounds: '> 0, ≤ 4',
      defaultJson: 1,
    });
    expect(fieldOf('/sd/text2image/v1', 'scheduler')).toMatchObject({
      kind: 'select',
      defaultJson: 'EulerDiscreteScheduler',
    });
    expect(fieldOf('/sd/text2image/v1', 'scheduler').options).toContain('DDIMScheduler');
    expect(fieldOf('/sd/text2image/v1', 'controlnets')).toMatchObject({
      kind: 'choices',
      options: ['openpose', 'canny', 'depth'],
    });
    expect(fieldOf('/sd/text2image/v1', 'lora_weights')).toMatchObject({ kind: 'list', numericItems: true });
    expect(fieldOf('/bgremover/v1', 'init_image')).toMatchObject({ kind: 'image', required: true });
    expect(fieldOf('/sdxl/text2image/v1', 'ip_adapter_image').kind).toBe('images');
    expect(fieldOf('/sd/controlnet/v1', 'init_images').kind).toBe('images');
    expect(fieldOf('/bgremover/v1', 'only_mask')).toMatchObject({ kind: 'boolean', defaultJson: false });
    const model = fieldOf('/superresolution/v1', 'model_name');
    expect(model.kind).toBe('text');
    expect(model.options.length).toBeGreaterThan(0);
    expect(model.allowed).toContain('{hash}');
  });

  it('names in REFINES only pairs the contract has: every schema with a refining field has the field it refines', () => {
    let seen = 0;
    for (const endpoint of pipelines()) {
      const names = fieldsOf(endpoint).map((field) => field.name);
      for (const [refining, refined] of Object.entries(REFINES)) {
        if (!names.includes(refining)) continue;
        seen += 1;
        expect(names, `${endpoint.path}: ${refining} without ${refined}`).toContain(refined);
      }
    }
    expect(seen).toBeGreaterThan(0);
  });

  it('shows a refining field once the field it refines has a value, its own or its default', () => {
    expect(shown('/sd/text2image/v1', {})).not.toContain('lora_weights');
    expect(shown('/sd/text2image/v1', { lora_models: ['abc'] })).toContain('lora_weights');
    expect(shown('/sd/text2image/v1', {})).not.toContain('controlnet_weights');
    expect(shown('/sd/text2image/v1', { controlnets: ['canny'] })).toContain('controlnet_weights');
    // ControlnetPromptSD's controlnets default to ["canny"].
    expect(shown('/sd/controlnet/v1', {})).toContain('controlnet_weights');
  });

  it("shows (and requires) a field the schema's if/then requires, only while its condition holds", () => {
    const load = pipelineOf('/load_model/v1')!;
    const extension = fieldOf('/load_model/v1', 'model_extension');
    const revision = fieldOf('/load_model/v1', 'revision');
    expect(shown('/load_model/v1', { model_type: 'lora' })).not.toContain('model_extension');
    expect(shown('/load_model/v1', { model_type: 'lora' })).not.toContain('revision');
    const withUrl = { model_type: 'checkpoint', model_url: 'https://models.example/a.safetensors' };
    expect(shown('/load_model/v1', withUrl)).toEqual(expect.arrayContaining(['model_extension', 'revision']));
    expect(isRequired(load, extension, withUrl)).toBe(true);
    expect(isRequired(load, revision, { model_type: 'lora' })).toBe(false);
  });

  it('sends only the values of the fields that apply', () => {
    const endpoint = pipelineOf('/sd/text2image/v1')!;
    const fields = fieldsOf(endpoint);
    expect(bodyOf(endpoint, fields, { prompt: 'a', negative_prompt: '', lora_weights: [1] })).toEqual({
      prompt: 'a',
      negative_prompt: '',
    });
  });

  it("answers the API's own 422 messages for a body, by field, and none for each pipeline's example", () => {
    const endpoint = pipelineOf('/sd/text2image/v1')!;
    const body = { prompt: 'a', negative_prompt: '', samples: 9, width: 'wide', lora_weights: [20] };
    const api = compileRequestValidator(endpointByPath('/sd/text2image/v1')!)(structuredClone(body));
    expect(api.ok).toBe(false);
    const problems = problemsOf(endpoint, body);
    expect(problems).toEqual({
      samples: ['ensure this value is less than or equal to 4'],
      width: ['value is not a valid integer'],
      lora_weights: ['0: ensure this value is less than or equal to 10'],
    });
    // Each message is the one in the API's detail.
    if (!api.ok)
      for (const entry of api.detail) expect(problems[String(entry.loc[1])]!.join()).toContain(entry.msg);
    for (const pipeline of pipelines())
      expect(problemsOf(pipeline, structuredClone(pipeline.example as object) as never)).toEqual({});
    // The body given is left as it was (the validator fills defaults into its own copy).
    expect(body).toEqual({ prompt: 'a', negative_prompt: '', samples: 9, width: 'wide', lora_weights: [20] });
  });

  it('reads typed text as the API would receive it', () => {
    const samples = fieldOf('/sd/text2image/v1', 'samples');
    expect(typedValue(samples, '3')).toBe(3);
    expect(typedValue(samples, 'three')).toBe('three');
    expect(typedValue(samples, '')).toBeUndefined();
    expect(typedValue(fieldOf('/sd/text2image/v1', 'negative_prompt'), '')).toBe('');
    expect(typedValue(fieldOf('/sd/text2image/v1', 'lora_weights'), '0.5, 1, x')).toEqual([0.5, 1, 'x']);
    expect(
      typedValue(
        fieldOf('/sd/controlnet/v1', 'init_images'),
        'https://a.example/1.png\nhttps://a.example/2.png',
      ),
    ).toEqual(['https://a.example/1.png', 'https://a.example/2.png']);
  });
});

describe('the built site', () => {
  const pages = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) return entry.name === 'assets' ? [] : pages(full);
      return entry.name.endsWith('.html') ? [full] : [];
    });
  const initialScripts = (html: string) =>
    [...html.matchAll(/<script[^>]*\ssrc="?([^" >]+)"?/g)].map((match) => match[1]!);
  /** A text only the playground's code has: the storage key of the API key. */
  const PLAYGROUND_MARK = 'imagegen.playground.apiKey';

  it("keeps the playground's code out of every page's initial scripts, its own page's included", () => {
    expect(existsSync(path.join(BUILD, 'playground/index.html'))).toBe(true);
    const js = path.join(BUILD, 'assets/js');
    const playgroundChunks = readdirSync(js).filter((file) =>
      readFileSync(path.join(js, file), 'utf8').includes(PLAYGROUND_MARK),
    );
    expect(playgroundChunks.length).toBeGreaterThan(0);
    const all = pages(BUILD);
    expect(all.length).toBeGreaterThan(50);
    for (const page of all) {
      const scripts = initialScripts(readFileSync(page, 'utf8'));
      expect(scripts.length, page).toBeGreaterThan(0);
      for (const chunk of playgroundChunks) expect(scripts.join(' '), page).not.toContain(chunk);
    }
  });

  it("puts a Try it link to the playground on each task endpoint's page, with the pipeline chosen", () => {
    const page = readFileSync(
      path.join(BUILD, 'Specialized Models/Remove & Change Background/index.html'),
      'utf8',
    );
    expect(page).toContain('href="/playground?pipeline=%2Fbgremover%2Fv1"');
    expect(page).toContain('href="/playground?pipeline=%2Fbgchanger%2Fv1"');
  });
});
