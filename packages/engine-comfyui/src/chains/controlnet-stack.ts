import type { Refusal } from '../contracts.ts';
import type { Link } from '../workflow/graph.ts';
import type { NodeClass } from '../workflow/node-types.ts';
import type { Workflow } from '../workflow/workflow.ts';
import { loadImage } from './input-images.ts';
import type { Conditioning } from './prompt-encoding.ts';
import type { RequestFields } from './request-fields.ts';

export type Family = 'sd' | 'sdxl';

/**
 * The ControlNet model file of each contract controlnet name, per model family (folder
 * `controlnet`), as their publishers name them.
 */
export const CONTROLNET_FILES: Readonly<Record<Family, Readonly<Record<string, string>>>> = {
  sd: {
    canny: 'control_v11p_sd15_canny.pth',
    openpose: 'control_v11p_sd15_openpose.pth',
    depth: 'control_v11f1p_sd15_depth.pth',
  },
  sdxl: {
    canny: 'controlnet-canny-sdxl-1.0.safetensors',
    openpose: 'OpenPoseXL2.safetensors',
    depth: 'controlnet-depth-sdxl-1.0.safetensors',
  },
};

/** Canny's thresholds as a share of full brightness: diffusers' usual 100 and 200 of 255. */
const CANNY = { low_threshold: 0.4, high_threshold: 0.8 } as const;

/**
 * comfyui_controlnet_aux's preprocessors' working sizes: ComfyUI refuses a graph outside them. The
 * contract takes any positive `resolution` (and, on some paths, no upper bound); a detector given
 * a few pixels finds nothing, so a value outside works at the nearest size the node takes.
 */
const PREPROCESSOR_RESOLUTION = { min: 64, max: 16384 } as const;

function workingSize(resolution: number): number {
  return Math.min(PREPROCESSOR_RESOLUTION.max, Math.max(PREPROCESSOR_RESOLUTION.min, Math.round(resolution)));
}

/**
 * How each controlnet's control picture is made from the photo: Canny is a core node; the pose
 * skeleton and the depth map come from comfyui_controlnet_aux, the preprocessors of the
 * controlnet_aux package diffusers' controlnet examples use (OpenposeDetector with body, hands and
 * face; MiDaS depth), working at `resolution` pixels.
 */
const PREPROCESS: Readonly<
  Record<string, (w: Workflow, image: Link<'IMAGE'>, resolution: number) => Link<'IMAGE'>>
> = {
  canny: (w, image) => w.node('Canny', { image, ...CANNY }).out(0),
  openpose: (w, image, resolution) =>
    w
      .node('OpenposePreprocessor', {
        image,
        detect_hand: 'enable',
        detect_body: 'enable',
        detect_face: 'enable',
        resolution: workingSize(resolution),
      })
      .out(0),
  depth: (w, image, resolution) =>
    w.node('MiDaS-DepthMapPreprocessor', { image, resolution: workingSize(resolution) }).out(0),
};

const CANNY_HAS_NO_RESOLUTION =
  "sets the openpose and depth preprocessors' working size; Canny has none, so it is not used";

const WITHOUT_CONTROLNETS = 'is only used with controlnets, and none is named, so it is not used';

/**
 * What the controlnet fields take no notice of, as diffusers' pipelines took none, for
 * `requires.ignores`: the fields that go with controlnets when none is named, and `resolution`
 * where no preprocessor takes a working size.
 */
export function controlnetIgnores(imageField: 'init_images' | 'control_image'): Refusal[] {
  return [
    { field: 'resolution', why: CANNY_HAS_NO_RESOLUTION },
    ...[imageField, 'resolution', ...PER_CONTROLNET].map((field) => ({ field, why: WITHOUT_CONTROLNETS })),
  ];
}

/** Controlnets whose preprocessor takes a working size (core Canny has none). */
const SIZED_PREPROCESSORS = new Set(['openpose', 'depth']);

export interface ControlUnit {
  /** The contract's controlnet name: which preprocessor makes its picture. */
  readonly name: string;
  readonly file: string;
  /** The uploaded photo the control picture is made from. */
  readonly image: string;
  readonly strength: number;
  readonly start: number;
  readonly end: number;
  /** The preprocessor's working size (`resolution`). */
  readonly resolution: number;
}

const PER_CONTROLNET = ['controlnet_weights', 'starting_control_steps', 'ending_control_steps'] as const;

/**
 * The fields the controlnet stack reads. Optional: the one-call generators have none of them, and
 * the control picture is `init_images` on the controlnet paths, `control_image` on the others.
 */
export interface ControlnetFields {
  readonly controlnets?: readonly string[] | undefined;
  readonly resolution?: number | undefined;
  readonly controlnet_weights?: readonly number[] | undefined;
  readonly starting_control_steps?: readonly number[] | undefined;
  readonly ending_control_steps?: readonly number[] | undefined;
  readonly init_images?: readonly string[] | undefined;
  readonly control_image?: string | undefined;
}

/**
 * The request's controlnets with their pictures, weights and start and end (as shares of the
 * steps). `images` are the uploads of `imageField`: one picture for every controlnet, or one each.
 */
export function controlUnits(
  w: { note(text: string): void },
  fields: RequestFields<ControlnetFields>,
  family: Family,
  imageField: 'init_images' | 'control_image',
  images: readonly string[],
): ControlUnit[] {
  const names = fields.list('controlnets');
  if (names.length === 0) {
    for (const field of [imageField, 'resolution', ...PER_CONTROLNET] as const) {
      if (fields.has(field)) w.note(`${field}: ${WITHOUT_CONTROLNETS}`);
    }
    return [];
  }
  if (fields.has('resolution') && !names.some((name) => SIZED_PREPROCESSORS.has(name))) {
    w.note(`resolution: ${CANNY_HAS_NO_RESOLUTION}`);
  }
  if (images.length === 0) fields.refuse('controlnets', `needs a control picture in ${imageField}`);
  if (images.length !== 1 && images.length !== names.length) {
    fields.refuse(
      imageField,
      `${images.length} picture(s) for ${names.length} controlnet(s); send one, or one per controlnet`,
    );
  }
  const perUnit = Object.fromEntries(
    PER_CONTROLNET.map((field) => {
      const values = fields.list(field);
      if (values.length > 0 && values.length !== names.length) {
        fields.refuse(
          field,
          `${values.length} value(s) for ${names.length} controlnet(s); send one per controlnet`,
        );
      }
      return [field, values];
    }),
  ) as Record<(typeof PER_CONTROLNET)[number], readonly number[]>;
  return names.map((name, i) => {
    const start = perUnit.starting_control_steps[i] ?? 0;
    const end = perUnit.ending_control_steps[i] ?? 1;
    if (start > end)
      fields.refuse('starting_control_steps', `controlnet ${i + 1} starts (${start}) after it ends (${end})`);
    return {
      name,
      resolution: fields.number('resolution'),
      file: CONTROLNET_FILES[family][name]!,
      image: images[images.length === 1 ? 0 : i]!,
      strength: perUnit.controlnet_weights[i] ?? 1,
      start,
      end,
    };
  });
}

export const CONTROLNET_NODES: readonly NodeClass[] = [
  'LoadImage',
  'Canny',
  'OpenposePreprocessor',
  'MiDaS-DepthMapPreprocessor',
  'ControlNetLoader',
  'ControlNetApplyAdvanced',
];

/** One ControlNetApplyAdvanced per unit, chained on both conditionings; each photo is preprocessed once per kind. */
export function applyControlnets(
  w: Workflow,
  conditioning: Conditioning,
  vae: Link<'VAE'>,
  units: readonly ControlUnit[],
): Conditioning {
  const photos = new Map<string, Link<'IMAGE'>>();
  const pictures = new Map<string, Link<'IMAGE'>>();
  let { positive, negative } = conditioning;
  for (const unit of units) {
    const key = `${unit.name}\n${unit.image}`;
    let image = pictures.get(key);
    if (!image) {
      let photo = photos.get(unit.image);
      if (!photo) {
        photo = loadImage(w, unit.image);
        photos.set(unit.image, photo);
      }
      image = PREPROCESS[unit.name]!(w, photo, unit.resolution);
      pictures.set(key, image);
    }
    const control_net = w.node('ControlNetLoader', { control_net_name: unit.file }).out(0);
    [positive, negative] = w.node('ControlNetApplyAdvanced', {
      positive,
      negative,
      control_net,
      image,
      strength: unit.strength,
      start_percent: unit.start,
      end_percent: unit.end,
      vae,
    }).outputs;
  }
  return { positive, negative };
}
