import { validatePrompt } from '@imagegen/comfyui-fake';
import { endpointByPath } from '@imagegen/contract';
import { EngineInputError, type JobModel } from '@imagegen/engines';
import { describe, expect, it } from 'vitest';
import { CONTROLNET_FILES } from '../src/chains/controlnet-stack.ts';
import { IP_ADAPTER_FILES } from '../src/chains/ip-adapter.ts';
import { MODEL_FAMILY_ERROR } from '../src/chains/model-files.ts';
import { MODEL_SETTINGS_ERROR } from '../src/chains/model-settings.ts';
import { parseCheckpointSettings } from '../src/comfyui-settings.ts';
import { COMPILERS } from '../src/compilers/index.ts';
import type { CompileContext, CompiledWorkflow, ImageSize, PipelineCompiler } from '../src/contracts.ts';
import { LCM_SAMPLING, MODEL_PROFILES, type ModelProfile, type ProfileId } from '../src/model-profiles.ts';
import {
  equippedServer,
  LCM_LORAS,
  MINIMAL_REQUESTS,
  requestProperties,
  uploadsOf,
  url,
  validatedRequest,
} from './compile-request.ts';
import { type Extent, GraphSizes } from './graph-sizes.ts';
import { objectInfoWithFiles } from './object-info-with-files.ts';

/**
 * The space of requests, not examples: every pipeline, compiled over every model family its
 * contract accepts (built-in ids, ids COMFYUI_CHECKPOINTS maps, declares or gives a role, an
 * owner's models), a grid of sizes (small, native, large, odd, extreme proportions) and of input
 * pictures, strengths, samples, schedulers, steps, guidance and the structural fields (hires,
 * HiDiffusion, controlnets, IP-Adapters, LoRAs, upscale, clip_skip). Each graph is held to
 * ComfyUI's validation and to what an expert checks, read from the graph itself (graph-sizes.ts
 * works out what every node samples and answers):
 *
 * - the first pass samples within the loaded model's pixel budget (a second pass within its
 *   reach), at the proportions of what is drawn (the request, or the picture that frames it);
 * - the answer is exactly the expected size; no picture is cropped or stretched;
 * - no pass changes a picture more than `strength` allows, and an outpainted border is sampled fully;
 * - controlnets, IP-Adapters and the LCM LoRA are the loaded family's; a distilled model samples
 *   within its bounds, with its schedule;
 * - a repainted picture is laid back over the original;
 * - a refusal at submission is the compile's refusal, in the same words, and whatever the compile
 *   refuses for a known family was refused at submission.
 *
 * The full product is far too large to compile in a test run (tens of billions of graphs), so it
 * is sampled deterministically: pipeline x installation x model id x size is complete (the
 * dimensions the budget, the family and the answer turn on), and every other dimension is taken
 * in turn from its list at a prime stride of the case's index, so each value meets every model id
 * and size class over the run (each list is shorter than its stride, which is prime). The same
 * cases run every time.
 */

// ── The installations: every role mapped and families declared, or nothing mapped ───────────────

/** An owner's checkpoints, as the worker resolves them (their ids are 32 hex digits). */
const OWN_XL = 'a'.repeat(32);
const OWN_FLUX = 'b'.repeat(32);
const OWNED: Readonly<Record<string, JobModel>> = {
  [OWN_XL]: {
    modelId: OWN_XL,
    modelType: 'checkpoint',
    baseModel: 'sdxl',
    extension: 'safetensors',
    url: null,
  },
  [OWN_FLUX]: {
    modelId: OWN_FLUX,
    modelType: 'checkpoint',
    baseModel: 'flux',
    extension: 'safetensors',
    url: null,
  },
};

interface Installation {
  readonly name: string;
  readonly checkpoints: Readonly<Record<string, string>>;
  readonly families: CompileContext['families'];
}

const MAPPED: Installation = {
  name: 'every role mapped',
  ...parseCheckpointSettings(
    [
      'sd1.5=sd15.safetensors',
      'sdxl=sdxl.safetensors',
      'sd1.5:inpainting=sd15-inpainting.safetensors',
      'sdxl:inpainting=sdxl-inpainting.safetensors',
      'sdxl:lightning=lightning.safetensors',
      'my-xl:sdxl=my-xl.safetensors',
      'my-xl:inpainting=my-xl-inpainting.safetensors',
      'my-turbo:sdxl-turbo=turbo.safetensors',
      'my-15=my-15.safetensors',
      'my-sd3:sd3=my-sd3.safetensors',
      'flux:dev=flux-dev.safetensors',
      `sd1.5:lcm=${LCM_LORAS['sd1.5:lcm']}`,
      `sdxl:lcm=${LCM_LORAS['sdxl:lcm']}`,
    ].join(','),
  ),
};

const DEFAULTS: Installation = { name: 'nothing mapped', checkpoints: {}, families: {} };

/** The server: every file either installation loads, listed where ComfyUI checks names. */
const SERVER = objectInfoWithFiles(
  {
    CheckpointLoaderSimple: {
      ckpt_name: [
        ...Object.values(MAPPED.checkpoints).filter((file) => !file.startsWith('flux')),
        `${OWN_XL}.safetensors`,
        `${OWN_FLUX}.safetensors`,
        'sdxl_lightning_8step.safetensors',
      ],
    },
    UNETLoader: { unet_name: ['flux-dev.safetensors'] },
  },
  equippedServer,
);

// ── What each model id is: the oracle of which checkpoint loads and which profile it draws with ──

type Expected = { readonly profile: ProfileId; readonly file: string } | { readonly refused: true };

const PATH_FAMILY: Readonly<Record<string, ProfileId>> = {
  '/sd/text2image/v1': 'sd1.5',
  '/sd/image2image/v1': 'sd1.5',
  '/sd/inpainting/v1': 'sd1.5',
  '/sd/controlnet/v1': 'sd1.5',
  '/generate/v1': 'sd1.5',
  '/sdxl/text2image/v1': 'sdxl',
  '/sdxl/image2image/v1': 'sdxl',
  '/sdxl/inpainting/v1': 'sdxl',
  '/sdxl/controlnet/v1': 'sdxl',
  '/generate/v2': 'sdxl',
  '/facelock/v1': 'sd1.5',
  '/facelock/v2': 'sdxl',
};

/** The model ids a pipeline's `model_id` is tried with, per installation. */
function modelIds(pipeline: string, installation: Installation): readonly (string | undefined)[] {
  if (!requestProperties(pipeline)['model_id']) return [undefined];
  const shared = ['sd1.5', 'sdxl', 'sdxl-lightning', 'sd3', 'flux-dev', OWN_XL, OWN_FLUX];
  return installation === MAPPED ? [...shared, 'my-xl', 'my-turbo', 'my-15', 'my-sd3'] : shared;
}

/** Which checkpoint an SD model id loads and what it is, written out per id (not by the engine's code). */
function expectedSdModel(
  pipeline: string,
  installation: Installation,
  id: string,
  inpainting: boolean,
): Expected {
  const mapped = installation === MAPPED;
  const path = PATH_FAMILY[pipeline]!;
  const own = (profile: ProfileId, file: string, inpaintingFile?: string): Expected =>
    inpainting && inpaintingFile && mapped
      ? { profile: `${profile}-inpainting` as ProfileId, file: inpaintingFile }
      : { profile, file };
  switch (id) {
    case 'sd1.5':
      return own(
        'sd1.5',
        mapped ? 'sd15.safetensors' : 'v1-5-pruned-emaonly.safetensors',
        'sd15-inpainting.safetensors',
      );
    case 'sdxl':
      return own(
        'sdxl',
        mapped ? 'sdxl.safetensors' : 'sd_xl_base_1.0.safetensors',
        'sdxl-inpainting.safetensors',
      );
    case 'sdxl-lightning':
      return {
        profile: 'sdxl-lightning',
        file: mapped ? 'lightning.safetensors' : 'sdxl_lightning_8step.safetensors',
      };
    case 'my-xl':
      return own('sdxl', 'my-xl.safetensors', 'my-xl-inpainting.safetensors');
    case 'my-turbo':
      return { profile: 'sdxl-turbo', file: 'turbo.safetensors' };
    case 'my-15':
      // Undeclared: the path's family.
      return { profile: path, file: 'my-15.safetensors' };
    case OWN_XL:
      return { profile: 'sdxl', file: `${OWN_XL}.safetensors` };
    default:
      // sd3, my-sd3, flux-dev, the owner's Flux checkpoint: no SD graph draws them.
      return { refused: true };
  }
}

/** The profile a pipeline without `model_id` draws with. */
function fixedProfile(pipeline: string, installation: Installation, input: Record<string, unknown>) {
  const mapped = installation === MAPPED;
  const table: Readonly<Record<string, ProfileId | undefined>> = {
    '/generate/v3': mapped ? 'flux-dev' : 'flux-schnell',
    '/sd3/v1': 'sd3',
    '/sd3_5/v1': 'sd3.5',
    '/instamodel/v1': 'sdxl-lightning',
    '/photomaker/v1': 'sdxl',
    '/logo/v1': 'sdxl',
    '/relight/v1': 'sd1.5',
    '/outpainting/v1': mapped ? 'sdxl-inpainting' : 'sdxl',
    '/bgchanger/v1': mapped ? 'sdxl-inpainting' : 'sdxl',
    '/modelswitch/v1': mapped ? 'sdxl-inpainting' : 'sdxl',
    '/inpaint_anything/v1': mapped ? 'sdxl-inpainting' : 'sdxl',
    '/train_model/v1': input['base_model'] === 'sdxl' ? 'sdxl' : 'sd1.5',
  };
  return table[pipeline];
}

// ── The grid ───────────────────────────────────────────────────────────────────────────────────

const SIZES: readonly [number, number][] = [
  [512, 512],
  [1024, 1024],
  [1536, 1536],
  [768, 512],
  [1536, 640],
  [1536, 256],
  [1, 1536],
  [333, 77],
  [1016, 1016],
  [64, 64],
];
const PICTURES: readonly ImageSize[] = [
  { width: 1200, height: 800 },
  { width: 800, height: 1200 },
  { width: 96, height: 64 },
  { width: 4000, height: 3000 },
  { width: 1536, height: 96 },
  { width: 1024, height: 1024 },
];
const STRENGTHS = [0.05, 0.3, 0.5, 0.8, 1];
const STEPS = [undefined, 4, 8, 12, 30];
const GUIDANCES = [undefined, 1, 1.8, 5, 7.5];

/** The value of a list for case `i`: the list at a prime stride of i (each list is shorter than its prime). */
function pick<T>(list: readonly T[], i: number, prime: number): T {
  return list[(i * prime + prime) % list.length]!;
}

interface Property {
  type?: string;
  enum?: string[];
  maximum?: number;
  exclusiveMaximum?: number;
  items?: Property;
  anyOf?: Property[];
}

/** Whether a number is inside a field's bounds. */
function fits(property: Property | undefined, value: number): boolean {
  const schema = property?.anyOf?.find((s) => s.type !== 'null') ?? property;
  if (!schema) return false;
  return (
    (schema.maximum === undefined || value <= schema.maximum) &&
    (schema.exclusiveMaximum === undefined || value < schema.exclusiveMaximum)
  );
}

interface Case {
  readonly name: string;
  readonly pipeline: string;
  readonly installation: Installation;
  readonly body: Record<string, unknown>;
  /** Each picture field's pictures' sizes, as the engine knows them. */
  readonly pictures: Readonly<Record<string, ImageSize | ImageSize[]>>;
  readonly modelId: string | undefined;
}

/** The structural fields and settings of case `i` for a pipeline, within its schema. */
function variation(pipeline: string, i: number, family: 'sd' | 'sdxl'): Record<string, unknown> {
  const has = requestProperties<Property>(pipeline);
  const body: Record<string, unknown> = {};
  const steps = pick(STEPS, i, 31);
  if (steps !== undefined && fits(has['num_inference_steps'], steps)) body['num_inference_steps'] = steps;
  const guidance = pick(GUIDANCES, i, 37);
  if (guidance !== undefined && has['guidance_scale']) body['guidance_scale'] = guidance;
  if (pipeline === '/generate/v3') {
    const start = pick(['noise', 'picture', 'inpainting'], i, 107);
    if (start !== 'noise') body['init_image'] = url('init.png');
    if (start === 'inpainting') body['mask_image'] = url('mask.png');
    if (start !== 'noise') body['strength'] = pick(STRENGTHS, i, 41);
  } else if (has['strength'] && (has['init_image'] || pipeline === '/outpainting/v1')) {
    body['strength'] = pick(STRENGTHS, i, 41);
  }
  if (has['samples'])
    body['samples'] = pick(
      [1, 2, 4].filter((n) => fits(has['samples'], n)),
      i,
      43,
    );
  const schedulers = has['scheduler']?.enum ?? [];
  if (schedulers.length > 0) body['scheduler'] = pick(schedulers, i, 47);
  if (has['hires']) body['hires'] = pick([false, true], i, 53);
  if (has['hidiffusion']) body['hidiffusion'] = pick([false, false, true], i, 59);
  if (has['clip_skip']) {
    const clipSkip = pick([undefined, 1, 2, 3], i, 61);
    if (clipSkip !== undefined) body['clip_skip'] = clipSkip;
  }
  if (has['upscale']) {
    const upscale = pick([undefined, '2x', '1.5x'], i, 67);
    if (upscale) body['upscale'] = upscale;
  }
  if (has['lora_models'] && pick([false, true], i, 71)) body['lora_models'] = ['detail-tweaker'];
  const controlnets = pick([[], ['canny'], ['openpose', 'depth']], i, 73);
  if (has['init_images'] && has['controlnets']) {
    body['controlnets'] = controlnets.length > 0 ? controlnets : ['canny'];
  } else if (has['control_image'] && controlnets.length > 0) {
    body['controlnets'] = controlnets;
    body['control_image'] = url('control-0.png');
  }
  if (has['ip_adapter']) {
    const tag = family === 'sd' ? 'sd15' : 'sdxl';
    const other = family === 'sd' ? 'sdxl' : 'sd15';
    const choice = pick(['none', 'none', 'fits', 'other'], i, 79);
    const list = has['ip_adapter'];
    const items = (list?.anyOf?.find((schema) => schema.type === 'array') ?? list)?.items;
    const contract = items?.enum ?? items?.anyOf?.flatMap((s) => s.enum ?? []) ?? [];
    const allowed = (name: string) => contract.length === 0 || contract.includes(name);
    const names = Object.keys(IP_ADAPTER_FILES).filter(allowed);
    const name = names.find((n) => n.includes(choice === 'other' ? other : tag));
    if (choice !== 'none' && name) {
      body['ip_adapter'] = [name];
      body['ip_adapter_image'] = url('control-1.png');
    }
  }
  return body;
}

/** Every case: pipeline x installation x model id x size complete, the rest in turn. */
function cases(): Case[] {
  const out: Case[] = [];
  let i = 0;
  for (const compiler of COMPILERS) {
    const pipeline = compiler.pipeline;
    const has = requestProperties<Property>(pipeline);
    const sizes = has['width']
      ? SIZES.filter(([w, h]) => fits(has['width'], w) && fits(has['height'], h))
      : [undefined];
    for (const installation of [MAPPED, DEFAULTS]) {
      for (const modelId of modelIds(pipeline, installation)) {
        for (const size of sizes) {
          i += 1;
          const expectedFamily =
            modelId && PATH_FAMILY[pipeline]
              ? expectedSdModel(pipeline, installation, modelId, false)
              : undefined;
          const adapters =
            expectedFamily && 'profile' in expectedFamily
              ? (MODEL_PROFILES[expectedFamily.profile].adapters ?? 'sd')
              : PATH_FAMILY[pipeline] === 'sdxl'
                ? 'sdxl'
                : 'sd';
          const body: Record<string, unknown> = {
            ...MINIMAL_REQUESTS[pipeline],
            ...variation(pipeline, i, adapters),
            ...(size ? { width: size[0], height: size[1] } : {}),
            ...(modelId ? { model_id: modelId } : {}),
          };
          if (pipeline === '/train_model/v1') body['base_model'] = pick(['sd1.5', 'sdxl'], i, 83);
          if (pipeline === '/upscaler/v1') body['type'] = pick(['deblur', 'variation'], i, 89);
          if (pipeline === '/outpainting/v1') {
            body['direction'] = pick([['left'], ['up', 'down'], ['left', 'right', 'up', 'down']], i, 97);
            body['expansion'] = [pick([8, 64, 256], i, 101)];
          }
          const picture = pick(PICTURES, i, 103);
          const pictures: Record<string, ImageSize | ImageSize[]> = {};
          for (const field of endpointByPath(pipeline)?.imageFields ?? []) {
            const value = body[field];
            if (typeof value === 'string') pictures[field] = picture;
            else if (Array.isArray(value)) pictures[field] = value.map(() => picture);
          }
          out.push({
            name: `${pipeline} [${installation.name}] model ${modelId ?? '(fixed)'} at ${size?.join('x') ?? '(no size)'} #${i}`,
            pipeline,
            installation,
            body,
            pictures,
            modelId,
          });
        }
      }
    }
  }
  return out;
}

// ── The invariants ─────────────────────────────────────────────────────────────────────────────

/** A picture's proportions over the area of a requested size, rounded (the framing every path answers). */
function framed(picture: ImageSize, target: ImageSize): ImageSize {
  const factor = Math.sqrt((target.width * target.height) / (picture.width * picture.height));
  return {
    width: Math.max(1, Math.round(picture.width * factor)),
    height: Math.max(1, Math.round(picture.height * factor)),
  };
}

const times = (size: ImageSize, factor: number): ImageSize => ({
  width: Math.round(size.width * factor),
  height: Math.round(size.height * factor),
});

/** Python's round(), as ComfyUI's ImageScaleBy rounds a side: halves go to the even neighbour. */
function roundHalfEven(x: number): number {
  const floor = Math.floor(x);
  return x - floor !== 0.5 ? Math.round(x) : floor % 2 === 0 ? floor : floor + 1;
}

/** The `upscale` field's answer: the model's 4x, then ImageScaleBy to the factor. */
const upscaled = (size: ImageSize, factor: number): ImageSize =>
  factor === 1
    ? size
    : {
        width: roundHalfEven(size.width * 4 * (factor / 4)),
        height: roundHalfEven(size.height * 4 * (factor / 4)),
      };

const one = (sizes: ImageSize | ImageSize[] | undefined) => (Array.isArray(sizes) ? sizes[0] : sizes);

const SD_PIPELINES = new Set(Object.keys(PATH_FAMILY).filter((p) => !p.startsWith('/facelock')));
const INPAINTING = new Set(['/sd/inpainting/v1', '/sdxl/inpainting/v1']);
const REPAINTED = new Set(['/bgchanger/v1', '/modelswitch/v1', '/inpaint_anything/v1']);

/**
 * What the answer must be, and the frame whose proportions are drawn: written from the contract's
 * meaning of each path, not from the compilers.
 */
function expectedSizes(c: Case, input: Record<string, unknown>): { answer?: ImageSize; frame?: ImageSize } {
  const p = c.pipeline;
  const requested = { width: Number(input['width']), height: Number(input['height']) };
  const init = one(c.pictures['init_image']);
  const factor = typeof input['upscale'] === 'string' ? Number.parseFloat(input['upscale']) : 1;
  const hires = input['hires'] === true ? 1.5 : 1;
  if (INPAINTING.has(p)) return { answer: upscaled(init!, factor), frame: init };
  if (SD_PIPELINES.has(p)) {
    const control =
      (input['controlnets'] as unknown[] | undefined)?.length && p.includes('controlnet')
        ? one(c.pictures['init_images'])
        : input['control_image']
          ? one(c.pictures['control_image'])
          : undefined;
    const frame = init ? framed(init, requested) : control ? framed(control, requested) : requested;
    return { answer: upscaled(times(frame, hires), factor), frame };
  }
  switch (p) {
    case '/generate/v3':
      if (input['mask_image']) return { answer: init, frame: init };
      return init
        ? { answer: framed(init, requested), frame: init }
        : { answer: requested, frame: requested };
    case '/relight/v1': {
      const frame = framed(init!, requested);
      return { answer: frame, frame };
    }
    case '/logo/v1': {
      const frame = framed(one(c.pictures['image'])!, requested);
      return { answer: frame, frame };
    }
    case '/outpainting/v1': {
      const directions = input['direction'] as string[];
      const expansion = input['expansion'] as number[];
      const grow = (side: string) =>
        directions.reduce(
          (sum, d, n) => sum + (d === side ? expansion[expansion.length === 1 ? 0 : n]! : 0),
          0,
        );
      const canvas = {
        width: init!.width + grow('left') + grow('right'),
        height: init!.height + grow('up') + grow('down'),
      };
      return { answer: canvas, frame: canvas };
    }
    case '/upscaler/v1':
      return { answer: times(one(c.pictures['input_image'])!, 2) };
    case '/superresolution/v1':
      return { answer: upscaled(init!, Number(input['scale_factor'])) };
    case '/faceswap/v1':
      return { answer: one(c.pictures['input_image']) };
    case '/train_model/v1': {
      const photos = c.pictures['images'] as ImageSize[];
      const native = input['base_model'] === 'sdxl' ? 1024 : 512;
      const shortest = Math.min(native, ...photos.map((s) => Math.min(s.width, s.height)));
      const side = Math.max(64, Math.floor(shortest / 64) * 64);
      return { answer: { width: side, height: side }, frame: { width: side, height: side } };
    }
    default:
      if (REPAINTED.has(p)) {
        const picture = one(c.pictures['input_image'] ?? c.pictures['init_image']);
        return { answer: picture, frame: picture };
      }
      // Text to image at the requested size (facelock, instamodel, photomaker, SD3).
      if (input['width'] !== undefined) return { answer: requested, frame: requested };
      return {};
  }
}

/** How far rounding to the grid may move an area or a ratio: one block on each side. */
function slack(e: ImageSize, grid: number): number {
  return grid / Math.max(1, e.width) + grid / Math.max(1, e.height);
}

function nodes(workflow: CompiledWorkflow, classType?: string) {
  return Object.entries(workflow.prompt)
    .filter(([, node]) => classType === undefined || node.class_type === classType)
    .map(([id, node]) => ({ id, ...node }));
}

/** Whether a link's chain, followed through its first inputs, reaches a node of these classes. */
function reaches(workflow: CompiledWorkflow, link: unknown, classes: ReadonlySet<string>, seen = 0): boolean {
  if (!Array.isArray(link) || seen > 200) return false;
  const node = workflow.prompt[link[0] as string];
  if (!node) return false;
  if (classes.has(node.class_type)) return true;
  return Object.values(node.inputs).some((value) => reaches(workflow, value, classes, seen + 1));
}

const SAMPLERS = new Set(['KSampler', 'KSamplerAdvanced']);

/** The grid of a profile's latents, and of relight's first pass (the IC-Light demo's 64 px). */
function gridOf(profile: ModelProfile, pipeline: string): number {
  return pipeline === '/relight/v1' ? 64 : profile.pixels.grid.multiple;
}

function checkGraph(
  c: Case,
  input: Record<string, unknown>,
  workflow: CompiledWorkflow,
  profile?: ModelProfile,
) {
  const validation = validatePrompt(SERVER, { prompt: workflow.prompt });
  expect(validation, c.name).toMatchObject({ status: 200, nodeErrors: {} });

  const uploads = uploadsOf(c.pipeline, input);
  const pictures: Record<string, ImageSize> = {};
  for (const [field, names] of Object.entries(uploads)) {
    const sizes = c.pictures[field];
    (Array.isArray(names) ? names : [names]).forEach((name, n) => {
      pictures[name] = (Array.isArray(sizes) ? sizes[n] : sizes)!;
    });
  }
  const sizes = new GraphSizes(workflow.prompt, pictures);
  const { answer, frame } = expectedSizes(c, input);

  // The answer: exactly the size, one per sample.
  const saves = nodes(workflow, 'SaveImage');
  if (answer) {
    for (const save of saves) {
      const out = sizes.of(save.inputs['images'])!;
      expect([out.width, out.height], `${c.name}: answer`).toEqual([answer.width, answer.height]);
    }
  }
  const samples = Number(input['samples'] ?? 1);
  if (SD_PIPELINES.has(c.pipeline) || INPAINTING.has(c.pipeline) || c.pipeline === '/generate/v3') {
    expect(
      saves.map((save) => sizes.of(save.inputs['images'])!.batch),
      `${c.name}: one picture per sample`,
    ).toEqual([samples]);
  }

  // No picture is cut: no ImageScale crops, and a scaled input picture keeps its proportions.
  if (c.pipeline !== '/train_model/v1') {
    for (const scale of nodes(workflow, 'ImageScale')) {
      expect(scale.inputs['crop'], `${c.name}: ImageScale ${scale.id} crops`).toBe('disabled');
    }
  }
  if (c.pipeline !== '/upscaler/v1') expect(nodes(workflow, 'ImageCrop'), `${c.name}: ImageCrop`).toEqual([]);
  for (const scale of nodes(workflow, 'ImageScale')) {
    const before = sizes.of(scale.inputs['image'])!;
    if (!reaches(workflow, scale.inputs['image'], new Set(['LoadImage'])) || c.pipeline === '/train_model/v1')
      continue;
    if (reaches(workflow, scale.inputs['image'], SAMPLERS)) continue;
    const after = sizes.of([scale.id, 0])!;
    const ratio = after.width / after.height / (before.width / before.height);
    const grid = c.pipeline === '/relight/v1' ? 64 : 8;
    expect(
      Math.abs(Math.log(ratio)),
      `${c.name}: ImageScale ${scale.id} stretches a picture`,
    ).toBeLessThanOrEqual(Math.log(1 + slack(after, grid) + slack(before, 1)));
  }

  if (!profile) return;
  const { minShare, maxShare, secondPassShare, minSide, maxSide } = profile.pixels;
  const native = profile.pixels.side ** 2;
  const grid = gridOf(profile, c.pipeline);
  const samplers = nodes(workflow).filter((node) => SAMPLERS.has(node.class_type));
  const firsts = samplers.filter((s) => !reaches(workflow, s.inputs['latent_image'], SAMPLERS));
  const extentOf = (s: { id: string }) => sizes.input(s.id, 'latent_image')!;
  const same = (a: Extent, b: Extent) => a.width === b.width && a.height === b.height;
  // A sampler after another at the same size continues its schedule (PhotoMaker's merge step).
  const seconds = samplers.filter(
    (s) =>
      reaches(workflow, s.inputs['latent_image'], SAMPLERS) &&
      !firsts.some((f) => same(extentOf(f), extentOf(s))),
  );

  // The first pass: within the model's budget, at the frame's proportions (or the most extreme
  // proportions the model's sides allow, for a frame beyond them). HiDiffusion draws a large answer
  // in one pass, within a second pass's reach.
  const direct = input['hidiffusion'] === true;
  const top = direct ? secondPassShare : maxShare;
  const longestSide = direct ? maxSide * 2 : maxSide;
  if (c.pipeline !== '/upscaler/v1') {
    for (const sampler of firsts) {
      const latent = sizes.input(sampler.id, 'latent_image')!;
      const area = latent.width * latent.height;
      const loose = slack(latent, grid);
      const longest = Math.max(latent.width, latent.height);
      const shortest = Math.min(latent.width, latent.height);
      const atSide = longest >= longestSide - grid || shortest <= minSide + grid;
      if (!atSide) {
        expect(
          area,
          `${c.name}: first pass ${latent.width}x${latent.height} below ${profile.name}'s budget`,
        ).toBeGreaterThanOrEqual(native * minShare * (1 - loose));
      }
      expect(
        area,
        `${c.name}: first pass ${latent.width}x${latent.height} past ${profile.name}'s budget`,
      ).toBeLessThanOrEqual(native * top * (1 + loose));
      expect(longest, `${c.name}: first pass side`).toBeLessThanOrEqual(longestSide);
      if (frame && !atSide) {
        const ratio = latent.width / latent.height / (frame.width / frame.height);
        expect(
          Math.abs(Math.log(ratio)),
          `${c.name}: first pass ${latent.width}x${latent.height} for a ${frame.width}x${frame.height} frame`,
        ).toBeLessThanOrEqual(Math.log(1 + loose + slack(frame, 1)));
      }
    }
    for (const sampler of seconds) {
      const latent = sizes.input(sampler.id, 'latent_image')!;
      const first = sizes.input(firsts[0]!.id, 'latent_image')!;
      expect(latent.width * latent.height, `${c.name}: second pass within reach`).toBeLessThanOrEqual(
        native * secondPassShare * (1 + slack(latent, grid)),
      );
      expect(latent.width * latent.height, `${c.name}: second pass enlarges`).toBeGreaterThan(
        first.width * first.height,
      );
    }
  }

  // Strength: no pass changes a picture more than it allows; an outpainted border is sampled fully.
  const strength = input['strength'];
  if (typeof strength === 'number' && (input['init_image'] !== undefined || INPAINTING.has(c.pipeline))) {
    if (c.pipeline === '/outpainting/v1') {
      for (const sampler of samplers) expect(sampler.inputs['denoise'], c.name).toBe(1);
    } else {
      for (const sampler of samplers) {
        expect(Number(sampler.inputs['denoise']), `${c.name}: denoise past strength`).toBeLessThanOrEqual(
          strength,
        );
      }
    }
  }

  // The loaded family's adapters only.
  const adapters = profile.adapters;
  for (const loader of nodes(workflow, 'ControlNetLoader')) {
    const file = String(loader.inputs['control_net_name']);
    if (c.pipeline === '/instamodel/v1') continue;
    expect(adapters && Object.values(CONTROLNET_FILES[adapters]), `${c.name}: controlnet ${file}`).toContain(
      file,
    );
  }
  if (SD_PIPELINES.has(c.pipeline)) {
    const tag = adapters === 'sd' ? 'sd15' : 'sdxl';
    const fitting = Object.entries(IP_ADAPTER_FILES)
      .filter(([name]) => name.includes(tag))
      .map(([, files]) => files.file);
    for (const loader of nodes(workflow, 'IPAdapterModelLoader')) {
      expect(fitting, `${c.name}: IP-Adapter`).toContain(loader.inputs['ipadapter_file']);
    }
  }

  // A distilled model samples within its bounds and with its own schedule; LCM with its LoRA.
  const lcm = input['scheduler'] === 'LCMScheduler' && !profile.distilled;
  const bounds = lcm ? LCM_SAMPLING : profile.distilled;
  for (const sampler of samplers) {
    if (c.pipeline === '/relight/v1' || c.pipeline === '/upscaler/v1') continue;
    if (bounds) {
      expect(Number(sampler.inputs['steps']), `${c.name}: steps`).toBeLessThanOrEqual(bounds.maxSteps);
      expect(Number(sampler.inputs['cfg']), `${c.name}: cfg`).toBeLessThanOrEqual(bounds.maxCfg);
      expect(sampler.inputs['scheduler'], `${c.name}: schedule`).toBe(
        lcm ? LCM_SAMPLING.scheduler : profile.sampling.scheduler,
      );
    }
    if (profile.architecture === 'flux') expect(sampler.inputs['cfg'], `${c.name}: Flux cfg`).toBe(1);
  }
  if (lcm) {
    const loras = nodes(workflow, 'LoraLoader').map((node) => node.inputs['lora_name']);
    expect(loras, `${c.name}: LCM LoRA`).toContain(LCM_LORAS[`${adapters === 'sd' ? 'sd1.5' : 'sdxl'}:lcm`]);
    expect(nodes(workflow, 'ModelSamplingDiscrete')[0]?.inputs['sampling'], c.name).toBe('lcm');
  }
  if (profile.guidance === 'flux-guidance') expect(nodes(workflow, 'FluxGuidance'), c.name).toHaveLength(1);
  if (profile.guidance === 'none') expect(nodes(workflow, 'FluxGuidance'), c.name).toEqual([]);

  // A repainted picture is laid back over the original, at its own size (checked above).
  if (
    INPAINTING.has(c.pipeline) ||
    REPAINTED.has(c.pipeline) ||
    input['mask_image'] ||
    c.pipeline === '/outpainting/v1'
  ) {
    for (const save of saves) {
      let node = sizes.source(save.inputs['images']);
      while (['ImageUpscaleWithModel', 'ImageScaleBy', 'ReActorFaceSwap'].includes(node.class_type)) {
        node = sizes.source(node.inputs['image'] ?? node.inputs['input_image']);
      }
      expect(node.class_type, `${c.name}: composite`).toBe('ImageCompositeMasked');
      expect(
        reaches(workflow, node.inputs['destination'], new Set(['LoadImage'])),
        `${c.name}: over the original`,
      ).toBe(true);
      expect(reaches(workflow, node.inputs['destination'], SAMPLERS), `${c.name}: over the original`).toBe(
        false,
      );
    }
  }
}

/** The profile a compiled case drew with, and the checkpoint it must load. */
function expectedOf(c: Case, input: Record<string, unknown>): Expected | undefined {
  if (c.modelId !== undefined && PATH_FAMILY[c.pipeline]) {
    const expected = expectedSdModel(c.pipeline, c.installation, c.modelId, INPAINTING.has(c.pipeline));
    if (c.pipeline === '/facelock/v1' && 'profile' in expected) {
      return MODEL_PROFILES[expected.profile].adapters === 'sd' ? expected : { refused: true };
    }
    if (c.pipeline === '/facelock/v2' && 'profile' in expected) {
      return MODEL_PROFILES[expected.profile].adapters === 'sdxl' ? expected : { refused: true };
    }
    return expected;
  }
  const profile = fixedProfile(c.pipeline, c.installation, input);
  return profile ? { profile, file: '' } : undefined;
}

const ALL = cases();

describe('the space of requests', () => {
  it('covers every pipeline, with the full product of installations, model ids and sizes', () => {
    expect(new Set(ALL.map((c) => c.pipeline))).toEqual(new Set(COMPILERS.map((c) => c.pipeline)));
    expect(ALL.length).toBeGreaterThan(1000);
  });

  const compiled = new Map<string, number>();
  const chunks = 8;
  for (let chunk = 0; chunk < chunks; chunk++) {
    it(`compiles each request to a graph that keeps every invariant, or refuses it as declared (part ${chunk + 1} of ${chunks})`, () => {
      for (const c of ALL.filter((_, n) => n % chunks === chunk)) {
        const compiler = COMPILERS.find((x) => x.pipeline === c.pipeline) as PipelineCompiler;
        const input = validatedRequest(c.pipeline, c.body);
        const settings = { checkpoints: c.installation.checkpoints, families: c.installation.families };
        const refusal = compiler.admit?.({ input, ...settings }) ?? null;
        let workflow: CompiledWorkflow | undefined;
        let error: Error | undefined;
        try {
          workflow = compiler.compile({
            input,
            seed: 42,
            images: uploadsOf(c.pipeline, input),
            imageSizes: c.pictures,
            filenamePrefix: 'imagegen/space/img',
            ...settings,
            models: OWNED,
          });
        } catch (thrown) {
          if (!(thrown instanceof EngineInputError)) throw thrown;
          error = thrown;
        }
        const expected = expectedOf(c, input);
        if (refusal) {
          // Refused at submission: the compile refuses in the same words.
          expect([MODEL_FAMILY_ERROR, MODEL_SETTINGS_ERROR], c.name).toContain(refusal.type);
          expect(error?.message, c.name).toBe(`${refusal.field}: ${refusal.message}`);
          continue;
        }
        if (error) {
          const field = error.message.slice(0, error.message.indexOf(':'));
          expect(
            compiler.requires.refuses?.map((r) => r.field),
            `${c.name}: ${error.message}`,
          ).toContain(field);
          // Only what the settings cannot tell (an owner's model's family) is left to the compile.
          if (expected && 'refused' in expected) {
            expect([OWN_FLUX, OWN_XL], `${c.name}: ${error.message}`).toContain(c.modelId);
          } else if (c.modelId !== OWN_XL) {
            expect(error.message, c.name).not.toMatch(/distilled for|takes no guidance|LCM LoRA/);
          }
          continue;
        }
        expect(expected && 'refused' in expected, `${c.name} drew a model it must refuse`).not.toBe(true);
        const profile = expected && 'profile' in expected ? MODEL_PROFILES[expected.profile] : undefined;
        if (expected && 'file' in expected && expected.file) {
          expect(
            nodes(workflow!, 'CheckpointLoaderSimple').map((node) => node.inputs['ckpt_name']),
            `${c.name}: checkpoint`,
          ).toEqual([expected.file]);
        }
        checkGraph(c, input, workflow!, profile);
        const key = `${c.pipeline} ${c.modelId ?? ''}`;
        compiled.set(key, (compiled.get(key) ?? 0) + 1);
      }
    });
  }

  it('drew every model id a pipeline accepts, not only refusals', () => {
    for (const c of ALL) {
      const expected = expectedOf(c, validatedRequest(c.pipeline, c.body));
      if (expected && 'refused' in expected) continue;
      expect(compiled.get(`${c.pipeline} ${c.modelId ?? ''}`), `${c.pipeline} ${c.modelId}`).toBeGreaterThan(
        0,
      );
    }
  });
});
