import { readFileSync } from 'node:fs';
import { compileValidator, endpointByPath } from '@imagegen/contract';
import { waitSetting } from '../http/wait-setting.ts';
import { parseSize } from './image-sizes.ts';

/**
 * Which pipeline an OpenAI Images API `model` runs: the table the operator may edit
 * (`OPENAI_MODELS`, a JSON file of this shape), checked against the contract when the API starts,
 * so a table that names a missing pipeline, a size out of its bounds or a field it refuses stops
 * the start instead of failing requests.
 */

export interface OpenAiModel {
  /** The name `GET /v1/models` lists and clients send as `model`. */
  readonly id: string;
  /**
   * Other names that run this model, so clients that send OpenAI's own names (`gpt-image-1`,
   * `dall-e-3`) work unmodified. A name starting with `gpt-image` answers `b64_json` by default, as
   * OpenAI's GPT image models do; any other name `url`.
   */
  readonly aliases?: readonly string[];
  /** The pipeline `POST /v1/images/generations` runs (`/generate/v3`). */
  readonly generations: string;
  /**
   * The pipelines `POST /v1/images/edits` runs: `image` without a mask (image to image), `mask`
   * with one (inpainting). Either absent: that kind of edit is refused for this model.
   */
  readonly edits?: { readonly image?: string; readonly mask?: string };
  /**
   * The family's own sizes, `WIDTHxHEIGHT`: a requested size runs at the one nearest its shape
   * (then its area). The first is what `auto` means for a generation.
   */
  readonly sizes: readonly string[];
  /** Fields every request of this model sets (those the pipeline requires, or a default of ours). */
  readonly fields?: Readonly<Record<string, unknown>>;
  /** `num_inference_steps` by `quality` (`low`, `medium`, `high`, `standard`, `hd`); absent: the pipeline's. */
  readonly steps?: Readonly<Record<string, number>>;
}

export interface OpenAiModelTable {
  /** The model a request without `model` runs. */
  readonly default: string;
  readonly models: readonly OpenAiModel[];
}

/** Steps by quality for the Stable Diffusion families, whose pipelines default to 20. */
const SD_STEPS = { low: 12, medium: 20, standard: 20, high: 30, hd: 30 };
/** SDXL's trained buckets (about a megapixel each), square first. */
const SDXL_SIZES = ['1024x1024', '1152x896', '896x1152', '1216x832', '832x1216', '1344x768', '768x1344'];

/**
 * The table an API runs without `OPENAI_MODELS`: Flux Schnell answers OpenAI's own model names,
 * SDXL, SD 1.5 and SD 3.5 their own.
 */
export const DEFAULT_OPENAI_MODELS: OpenAiModelTable = {
  default: 'flux-schnell',
  models: [
    {
      id: 'flux-schnell',
      aliases: ['gpt-image-1', 'gpt-image-1-mini', 'gpt-image-1.5', 'dall-e-3', 'dall-e-2'],
      generations: '/generate/v3',
      edits: { image: '/generate/v3', mask: '/generate/v3' },
      sizes: [...SDXL_SIZES, '1440x720', '720x1440'],
      // The prompt as the client wrote it: no style preset added to it.
      fields: { style: null },
    },
    {
      id: 'sdxl',
      generations: '/sdxl/text2image/v1',
      edits: { image: '/sdxl/image2image/v1', mask: '/sdxl/inpainting/v1' },
      sizes: SDXL_SIZES,
      fields: { negative_prompt: '' },
      steps: SD_STEPS,
    },
    {
      id: 'sd1.5',
      generations: '/sd/text2image/v1',
      edits: { image: '/sd/image2image/v1', mask: '/sd/inpainting/v1' },
      sizes: ['512x512', '576x448', '448x576', '640x384', '384x640', '768x512', '512x768'],
      fields: { negative_prompt: '' },
      steps: SD_STEPS,
    },
    {
      id: 'sd3.5',
      generations: '/sd3_5/v1',
      sizes: SDXL_SIZES,
      fields: { negative_prompt: '', num_inference_steps: 28, guidance_scale: 4.5 },
      steps: { low: 16, medium: 28, standard: 28, high: 40, hd: 40 },
    },
  ],
};

/** The qualities clients send: OpenAI's (`standard`, `hd` for DALL·E; `low`... for GPT image) and `auto`. */
export const QUALITIES = ['auto', 'standard', 'hd', 'low', 'medium', 'high'] as const;

/** The table with its names resolved: what the routes read. */
export class OpenAiModels {
  private readonly byName = new Map<string, OpenAiModel>();

  constructor(readonly table: OpenAiModelTable) {
    for (const model of table.models) {
      for (const name of [model.id, ...(model.aliases ?? [])]) this.byName.set(name, model);
    }
  }

  /** Every name a client may send, ids first, in the table's order. */
  get names(): string[] {
    return [
      ...this.table.models.map((model) => model.id),
      ...this.table.models.flatMap((model) => model.aliases ?? []),
    ];
  }

  /** The model a name runs; the default for no name. */
  find(name: string | undefined): OpenAiModel | undefined {
    return this.byName.get(name ?? this.table.default);
  }
}

/**
 * Checks a table against the contract and answers it resolved; throws naming the first problem
 * (`where` says which table: the setting's file, or the built-in one).
 */
export function openAiModels(table: OpenAiModelTable, where = 'the OpenAI model table'): OpenAiModels {
  const fail = (why: string): never => {
    throw new Error(`${where}: ${why}`);
  };
  if (
    typeof table !== 'object' ||
    table === null ||
    !Array.isArray(table.models) ||
    table.models.length === 0
  ) {
    fail('expected {"default": "<model>", "models": [...]} with at least one model');
  }
  const names = new Set<string>();
  for (const model of table.models) {
    if (typeof model?.id !== 'string' || model.id === '') fail('every model needs an "id"');
    for (const name of [model.id, ...(model.aliases ?? [])]) {
      if (typeof name !== 'string' || name === '') fail(`model ${model.id}: an alias is not a name`);
      if (names.has(name)) fail(`the name ${name} is given twice`);
      names.add(name);
    }
    checkModel(model, (why) => fail(`model ${model.id}: ${why}`));
  }
  if (!names.has(table.default)) fail(`the default model ${table.default} is not in the table`);
  return new OpenAiModels(table);
}

function checkModel(model: OpenAiModel, fail: (why: string) => never): void {
  if (!Array.isArray(model.sizes) || model.sizes.length === 0)
    fail('"sizes" needs at least one WIDTHxHEIGHT');
  const sizes = model.sizes.map((text) => parseSize(text) ?? fail(`the size ${text} is not WIDTHxHEIGHT`));
  for (const [quality, steps] of Object.entries(model.steps ?? {})) {
    if (!(QUALITIES as readonly string[]).includes(quality)) fail(`"steps" names no quality ${quality}`);
    if (!Number.isInteger(steps)) fail(`"steps" of ${quality} is not a whole number`);
  }
  const pipelines = [
    ['generations', model.generations, false],
    ['edits.image', model.edits?.image, true],
    ['edits.mask', model.edits?.mask, true],
  ] as const;
  for (const [what, path, edits] of pipelines) {
    if (path === undefined) {
      if (what === 'generations') fail('"generations" names no pipeline');
      continue;
    }
    const endpoint = endpointByPath(path);
    if (endpoint?.kind !== 'generation' || !endpoint.request)
      fail(`${what}: ${path} is no generation pipeline`);
    const fields = endpoint.imageFields;
    if (edits && !fields.includes('init_image')) fail(`${what}: ${path} takes no init_image`);
    if (what === 'edits.mask' && !fields.includes('mask_image')) fail(`${what}: ${path} takes no mask_image`);
    // Every size, every quality's steps and the fixed fields must pass the pipeline's own checks.
    const validate = compileValidator(endpoint.request, 'body');
    const image = 'https://images.example.com/check.png';
    for (const steps of [undefined, ...Object.values(model.steps ?? {})]) {
      for (const { width, height } of sizes) {
        // Built as a request's input is (image-tasks.ts): the fixed fields first.
        const body = {
          ...model.fields,
          prompt: 'a check of the table',
          samples: 1,
          ...(steps === undefined ? {} : { num_inference_steps: steps }),
          width,
          height,
          ...(edits ? { init_image: image } : {}),
          ...(what === 'edits.mask' ? { mask_image: image } : {}),
        };
        const checked = validate(body);
        if (!checked.ok) {
          const [problem] = checked.detail;
          fail(`${what}: ${path} refuses ${problem?.loc.slice(1).join('.')} (${problem?.msg})`);
        }
      }
    }
  }
}

/** The OpenAI Images API's settings (README's configuration table). */
export interface OpenAiSettings {
  readonly models: OpenAiModels;
  /** OPENAI_WAIT_SECONDS, in ms. */
  readonly waitMs: number;
}

export function openAiSettingsFromEnv(env: NodeJS.ProcessEnv): OpenAiSettings {
  return { models: openAiModelsFromEnv(env), waitMs: waitSetting(env, 'OPENAI_WAIT_SECONDS') };
}

/** OPENAI_MODELS: the table's file, else the built-in table. */
export function openAiModelsFromEnv(env: NodeJS.ProcessEnv): OpenAiModels {
  const file = env.OPENAI_MODELS?.trim();
  if (!file) return openAiModels(DEFAULT_OPENAI_MODELS, 'the built-in OpenAI model table');
  let table: OpenAiModelTable;
  try {
    table = JSON.parse(readFileSync(file, 'utf8')) as OpenAiModelTable;
  } catch (error) {
    throw new Error(`OPENAI_MODELS=${file}: ${(error as Error).message}`);
  }
  return openAiModels(table, `OPENAI_MODELS=${file}`);
}
