import type { Refusal } from '../contracts.ts';
import type { Link } from '../workflow/graph.ts';
import type { NodeClass } from '../workflow/node-types.ts';
import { nodeClasses, type Workflow } from '../workflow/workflow.ts';
import type { Family } from './controlnet-stack.ts';
import type { Size } from './image-size.ts';
import { IMAGE_NODES, loadImage, loadImageBatch, loadMaskAt } from './input-images.ts';
import type { RequestFields } from './request-fields.ts';
import { ownerModelFile } from './user-models.ts';

/**
 * IP-Adapter on the SD1.5 and SDXL graphs, with ComfyUI_IPAdapter_plus: each adapter `ip_adapter`
 * names (a published one by name, or one of the owner's own by its model id, from the `ipadapter`
 * folder as their LoRAs are from `loras`) is loaded with the CLIP vision encoder it was trained
 * with (ViT-H for an owner's) and applied to the model
 * (IPAdapterAdvanced) with its picture and scale, as diffusers' `load_ip_adapter` and
 * `set_ip_adapter_scale` do; SDXL masks limit an adapter to a region (`attn_mask`, as diffusers'
 * IPAdapterMaskProcessor); style images steer the style only (InstantStyle, the pack's
 * `style transfer` weighting).
 */

/** The files each contract adapter name loads, as h94/IP-Adapter publishes them (folders `ipadapter`, `clip_vision`). */
export const IP_ADAPTER_FILES: Readonly<
  Record<string, { readonly file: string; readonly clipVision: string }>
> = {
  'ip-adapter_sd15_light': {
    file: 'ip-adapter_sd15_light_v11.bin',
    clipVision: 'CLIP-ViT-H-14-laion2B-s32B-b79K.safetensors',
  },
  'ip-adapter_sd15': {
    file: 'ip-adapter_sd15.safetensors',
    clipVision: 'CLIP-ViT-H-14-laion2B-s32B-b79K.safetensors',
  },
  'ip-adapter-plus_sd15': {
    file: 'ip-adapter-plus_sd15.safetensors',
    clipVision: 'CLIP-ViT-H-14-laion2B-s32B-b79K.safetensors',
  },
  'ip-adapter_sdxl': {
    file: 'ip-adapter_sdxl.safetensors',
    clipVision: 'CLIP-ViT-bigG-14-laion2B-39B-b160k.safetensors',
  },
  'ip-adapter_sdxl_vit-h': {
    file: 'ip-adapter_sdxl_vit-h.safetensors',
    clipVision: 'CLIP-ViT-H-14-laion2B-s32B-b79K.safetensors',
  },
  'ip-adapter-plus_sdxl_vit-h': {
    file: 'ip-adapter-plus_sdxl_vit-h.safetensors',
    clipVision: 'CLIP-ViT-H-14-laion2B-s32B-b79K.safetensors',
  },
  'ip-adapter-plus-face_sdxl_vit-h': {
    file: 'ip-adapter-plus-face_sdxl_vit-h.safetensors',
    clipVision: 'CLIP-ViT-H-14-laion2B-s32B-b79K.safetensors',
  },
};

/** The node classes of a family's IP-Adapter graphs (SDXL's masks are loaded and sized too). */
export function ipAdapterNodes(family: Family): readonly NodeClass[] {
  return nodeClasses(
    ['IPAdapterModelLoader', 'CLIPVisionLoader', 'IPAdapterAdvanced', 'ImageBatch'],
    family === 'sdxl' ? IMAGE_NODES.sizedMask : IMAGE_NODES.load,
  );
}

/** IPAdapterAdvanced's settings for diffusers' plain IP-Adapter: the same weight at every layer and step. */
const LINEAR = {
  weight_type: 'linear',
  combine_embeds: 'concat',
  start_at: 0,
  end_at: 1,
  embeds_scaling: 'V only',
} as const;

export interface LoadedIpAdapter {
  readonly ipadapter: Link<'IPADAPTER'>;
  readonly clip_vision: Link<'CLIP_VISION'>;
}

/** An adapter and the CLIP vision encoder it was trained with. */
export function loadIpAdapter(
  w: Workflow,
  files: { readonly file: string; readonly clipVision: string },
): LoadedIpAdapter {
  return {
    ipadapter: w.node('IPAdapterModelLoader', { ipadapter_file: files.file }).out(0),
    clip_vision: w.node('CLIPVisionLoader', { clip_name: files.clipVision }).out(0),
  };
}

/**
 * The style of `image` (a batch: their embeddings averaged) applied to the model through one
 * adapter, InstantStyle's way: the pack's `style transfer` weighting, the style layers only.
 */
export function applyStyle(
  w: Workflow,
  model: Link<'MODEL'>,
  adapter: LoadedIpAdapter,
  image: Link<'IMAGE'>,
  weight: number,
): Link<'MODEL'> {
  return w
    .node('IPAdapterAdvanced', {
      model,
      ...adapter,
      image,
      weight,
      ...LINEAR,
      weight_type: 'style transfer',
      combine_embeds: 'average',
    })
    .out(0);
}

/** The CLIP vision encoder of an owner's adapter: ViT-H, SD1.5's IP-Adapters' (and the SDXL vit-h ones'). */
const OWNER_ADAPTER_ENCODER = 'CLIP-ViT-H-14-laion2B-s32B-b79K.safetensors';

/** The contract's `base_model` of each family: what an owner's adapter must be made for. */
const BASE_MODEL: Readonly<Record<Family, string>> = { sd: 'sd1.5', sdxl: 'sdxl' };

const UPLOADED_ADAPTER =
  'is neither a named adapter nor one of your loaded adapters (a model id whose model_type is adapter)';

const OTHER_FAMILY = "is made for another model family than this model's";

/** What the IP-Adapter fields refuse on this engine, for `requires.refuses`. */
export const IP_ADAPTER_REFUSALS: readonly Refusal[] = [
  { field: 'ip_adapter', why: UPLOADED_ADAPTER },
  { field: 'ip_adapter', why: OTHER_FAMILY },
];

const FIELDS = [
  'ip_adapter_image',
  'ip_adapter_scale',
  'ip_adapter_style_images',
  'ip_adapter_mask_images',
] as const;

const WITHOUT_ADAPTERS = 'is only used with ip_adapter, and none is named, so it is not used';

/**
 * What the IP-Adapter fields take no notice of, for `requires.ignores`: the fields that go with
 * `ip_adapter` when it names none, as diffusers' pipelines load no adapter for them either. Only
 * SDXL requests carry masks.
 */
export function ipAdapterIgnores(family: Family): Refusal[] {
  return FIELDS.filter((field) => family === 'sdxl' || field !== 'ip_adapter_mask_images').map((field) => ({
    field,
    why: WITHOUT_ADAPTERS,
  }));
}

/**
 * The fields the IP-Adapter stack reads. Optional: the one-call SD1.5 generator has none of them,
 * and only SDXL has masks.
 */
export interface IpAdapterFields {
  readonly ip_adapter?: readonly string[] | null | undefined;
  readonly ip_adapter_image?: string | readonly string[] | null | undefined;
  readonly ip_adapter_scale?: readonly number[] | null | undefined;
  readonly ip_adapter_style_images?: readonly string[] | null | undefined;
  readonly ip_adapter_mask_images?: readonly string[] | null | undefined;
}

/** diffusers' scale when none is set. */
const DEFAULT_SCALE = 1;

/** One value for all adapters, or one each. */
function perAdapter<T>(
  fields: RequestFields<IpAdapterFields>,
  field: 'ip_adapter_image' | 'ip_adapter_scale',
  values: readonly T[],
  adapters: number,
): T[] {
  if (values.length === 1) return Array.from({ length: adapters }, () => values[0]!);
  if (values.length !== adapters) {
    fields.refuse(
      field,
      `${values.length} value(s) for ${adapters} adapter(s); send one, or one per adapter`,
    );
  }
  return [...values];
}

/** The named adapters that fit a family's models. */
function fittingAdapters(family: Family): string {
  const tag = family === 'sd' ? 'sd15' : 'sdxl';
  return Object.keys(IP_ADAPTER_FILES)
    .filter((n) => n.includes(tag))
    .join(', ');
}

/**
 * Why the first of the named adapters that is made for the other family than `family`'s (one
 * family's adapter on the other's model draws nothing useful) is refused; undefined when none is.
 * The API answers it at submission where the model's family is known; the compile fails with it.
 */
export function otherFamilyAdapter(names: readonly string[], family: Family): string | undefined {
  const tag = family === 'sd' ? 'sd15' : 'sdxl';
  const other = names.find((name) => Object.hasOwn(IP_ADAPTER_FILES, name) && !name.includes(tag));
  return other === undefined ? undefined : `'${other}' ${OTHER_FAMILY} (${fittingAdapters(family)})`;
}

/** The model with the request's IP-Adapters applied (unchanged when it names none). */
export function applyIpAdapters(
  w: Workflow,
  fields: RequestFields<IpAdapterFields>,
  family: Family,
  model: Link<'MODEL'>,
  size: Size,
): Link<'MODEL'> {
  const names = fields.list('ip_adapter');
  if (names.length === 0) {
    for (const field of FIELDS) {
      if (fields.has(field)) w.note(`${field}: ${WITHOUT_ADAPTERS}`);
    }
    return model;
  }
  const adapters = names.map((name) => {
    if (Object.hasOwn(IP_ADAPTER_FILES, name)) {
      const other = otherFamilyAdapter([name], family);
      if (other) fields.refuse('ip_adapter', other);
      return IP_ADAPTER_FILES[name]!;
    }
    // An uploaded adapter: one of the owner's models, loaded from its file as their LoRAs are.
    const file = ownerModelFile({ models: fields.models }, 'ip_adapter', name, {
      type: 'adapter',
      base: BASE_MODEL[family],
    });
    if (!file) fields.refuse('ip_adapter', `'${name}' ${UPLOADED_ADAPTER} (${fittingAdapters(family)})`);
    return { file, clipVision: OWNER_ADAPTER_ENCODER };
  });
  const images = fields.images('ip_adapter_image');
  const styles = fields.images('ip_adapter_style_images');
  if (images.length === 0 && styles.length === 0) {
    fields.refuse('ip_adapter', 'needs a picture: ip_adapter_image, or ip_adapter_style_images');
  }
  const pictures = images.length === 0 ? [] : perAdapter(fields, 'ip_adapter_image', images, names.length);
  const scales = perAdapter(
    fields,
    'ip_adapter_scale',
    fields.has('ip_adapter_scale') ? fields.list('ip_adapter_scale') : [DEFAULT_SCALE],
    names.length,
  );
  const maskFiles = fields.images('ip_adapter_mask_images');
  if (maskFiles.length > 0 && maskFiles.length !== names.length) {
    fields.refuse(
      'ip_adapter_mask_images',
      `${maskFiles.length} mask(s) for ${names.length} adapter(s); send one per adapter`,
    );
  }

  const loaded = adapters.map((files) => loadIpAdapter(w, files));
  pictures.forEach((picture, i) => {
    const mask = maskFiles[i];
    model = w
      .node('IPAdapterAdvanced', {
        model,
        ...loaded[i]!,
        image: loadImage(w, picture),
        weight: scales[i]!,
        ...LINEAR,
        ...(mask ? { attn_mask: loadMaskAt(w, mask, size) } : {}),
      })
      .out(0);
  });
  if (styles.length > 0) {
    // All style pictures through the first adapter, their embeddings averaged.
    model = applyStyle(w, model, loaded[0]!, loadImageBatch(w, styles), scales[0]!);
  }
  return model;
}
