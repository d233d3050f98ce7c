/**
 * The core ComfyUI node classes the compilers use, with the type of every input and output as the
 * server declares them in `/object_info` (a test holds this table to the recorded object_info:
 * every required input declared, every type the same). The graph builder reads it to type links,
 * so a compiler that wires a CLIP into a VAE input does not compile.
 */

/** Values that travel along links between nodes. */
export type LinkType =
  | 'MODEL'
  | 'CLIP'
  | 'VAE'
  | 'CONDITIONING'
  | 'LATENT'
  | 'IMAGE'
  | 'MASK'
  | 'CONTROL_NET'
  | 'UPSCALE_MODEL';

/** Values written into the graph (widgets); COMBO is one of a list the server declares. */
export type WidgetType = 'INT' | 'FLOAT' | 'STRING' | 'BOOLEAN' | 'COMBO';

export type InputType = LinkType | WidgetType;

export interface NodeTyping {
  /** Required inputs. */
  readonly inputs: Readonly<Record<string, InputType>>;
  readonly optional?: Readonly<Record<string, InputType>>;
  /** Output slots in order. */
  readonly outputs: readonly LinkType[];
}

export const NODE_TYPES = {
  // Loaders
  CheckpointLoaderSimple: { inputs: { ckpt_name: 'COMBO' }, outputs: ['MODEL', 'CLIP', 'VAE'] },
  UNETLoader: { inputs: { unet_name: 'COMBO', weight_dtype: 'COMBO' }, outputs: ['MODEL'] },
  DualCLIPLoader: {
    inputs: { clip_name1: 'COMBO', clip_name2: 'COMBO', type: 'COMBO' },
    optional: { device: 'COMBO' },
    outputs: ['CLIP'],
  },
  TripleCLIPLoader: {
    inputs: { clip_name1: 'COMBO', clip_name2: 'COMBO', clip_name3: 'COMBO' },
    outputs: ['CLIP'],
  },
  VAELoader: { inputs: { vae_name: 'COMBO' }, outputs: ['VAE'] },
  LoraLoader: {
    inputs: {
      model: 'MODEL',
      clip: 'CLIP',
      lora_name: 'COMBO',
      strength_model: 'FLOAT',
      strength_clip: 'FLOAT',
    },
    outputs: ['MODEL', 'CLIP'],
  },
  LoraLoaderModelOnly: {
    inputs: { model: 'MODEL', lora_name: 'COMBO', strength_model: 'FLOAT' },
    outputs: ['MODEL'],
  },
  ControlNetLoader: { inputs: { control_net_name: 'COMBO' }, outputs: ['CONTROL_NET'] },
  UpscaleModelLoader: { inputs: { model_name: 'COMBO' }, outputs: ['UPSCALE_MODEL'] },
  LoadImage: { inputs: { image: 'COMBO' }, outputs: ['IMAGE', 'MASK'] },

  // Text and conditioning
  CLIPSetLastLayer: { inputs: { clip: 'CLIP', stop_at_clip_layer: 'INT' }, outputs: ['CLIP'] },
  CLIPTextEncode: { inputs: { text: 'STRING', clip: 'CLIP' }, outputs: ['CONDITIONING'] },
  ConditioningZeroOut: { inputs: { conditioning: 'CONDITIONING' }, outputs: ['CONDITIONING'] },
  FluxGuidance: { inputs: { conditioning: 'CONDITIONING', guidance: 'FLOAT' }, outputs: ['CONDITIONING'] },
  ControlNetApplyAdvanced: {
    inputs: {
      positive: 'CONDITIONING',
      negative: 'CONDITIONING',
      control_net: 'CONTROL_NET',
      image: 'IMAGE',
      strength: 'FLOAT',
      start_percent: 'FLOAT',
      end_percent: 'FLOAT',
    },
    optional: { vae: 'VAE' },
    outputs: ['CONDITIONING', 'CONDITIONING'],
  },
  InpaintModelConditioning: {
    inputs: {
      positive: 'CONDITIONING',
      negative: 'CONDITIONING',
      vae: 'VAE',
      pixels: 'IMAGE',
      mask: 'MASK',
      noise_mask: 'BOOLEAN',
    },
    outputs: ['CONDITIONING', 'CONDITIONING', 'LATENT'],
  },
  StableCascade_StageB_Conditioning: {
    inputs: { conditioning: 'CONDITIONING', stage_c: 'LATENT' },
    outputs: ['CONDITIONING'],
  },

  // Models
  ModelSamplingSD3: { inputs: { model: 'MODEL', shift: 'FLOAT' }, outputs: ['MODEL'] },

  // Latents and sampling
  EmptyLatentImage: { inputs: { width: 'INT', height: 'INT', batch_size: 'INT' }, outputs: ['LATENT'] },
  EmptySD3LatentImage: { inputs: { width: 'INT', height: 'INT', batch_size: 'INT' }, outputs: ['LATENT'] },
  StableCascade_EmptyLatentImage: {
    inputs: { width: 'INT', height: 'INT', compression: 'INT', batch_size: 'INT' },
    outputs: ['LATENT', 'LATENT'],
  },
  RepeatLatentBatch: { inputs: { samples: 'LATENT', amount: 'INT' }, outputs: ['LATENT'] },
  LatentUpscaleBy: {
    inputs: { samples: 'LATENT', upscale_method: 'COMBO', scale_by: 'FLOAT' },
    outputs: ['LATENT'],
  },
  KSampler: {
    inputs: {
      model: 'MODEL',
      seed: 'INT',
      steps: 'INT',
      cfg: 'FLOAT',
      sampler_name: 'COMBO',
      scheduler: 'COMBO',
      positive: 'CONDITIONING',
      negative: 'CONDITIONING',
      latent_image: 'LATENT',
      denoise: 'FLOAT',
    },
    outputs: ['LATENT'],
  },
  VAEEncode: { inputs: { pixels: 'IMAGE', vae: 'VAE' }, outputs: ['LATENT'] },
  VAEDecode: { inputs: { samples: 'LATENT', vae: 'VAE' }, outputs: ['IMAGE'] },

  // Images
  ImageToMask: { inputs: { image: 'IMAGE', channel: 'COMBO' }, outputs: ['MASK'] },
  ImageScale: {
    inputs: { image: 'IMAGE', upscale_method: 'COMBO', width: 'INT', height: 'INT', crop: 'COMBO' },
    outputs: ['IMAGE'],
  },
  ImageScaleBy: {
    inputs: { image: 'IMAGE', upscale_method: 'COMBO', scale_by: 'FLOAT' },
    outputs: ['IMAGE'],
  },
  ImageUpscaleWithModel: { inputs: { upscale_model: 'UPSCALE_MODEL', image: 'IMAGE' }, outputs: ['IMAGE'] },
  ImagePadForOutpaint: {
    inputs: { image: 'IMAGE', left: 'INT', top: 'INT', right: 'INT', bottom: 'INT', feathering: 'INT' },
    outputs: ['IMAGE', 'MASK'],
  },
  Canny: { inputs: { image: 'IMAGE', low_threshold: 'FLOAT', high_threshold: 'FLOAT' }, outputs: ['IMAGE'] },
  SaveImage: { inputs: { images: 'IMAGE', filename_prefix: 'STRING' }, outputs: [] },
} as const satisfies Record<string, NodeTyping>;

export type NodeClass = keyof typeof NODE_TYPES;
