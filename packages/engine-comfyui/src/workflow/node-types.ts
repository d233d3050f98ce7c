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
  | 'UPSCALE_MODEL'
  | 'CLIP_VISION'
  // Training (comfy_extras/nodes_train.py): the trained weights, and the loss of each step.
  | 'LORA_MODEL'
  | 'LOSS_MAP'
  // Node packs' own types (see PACK_NODE_TYPES).
  | 'IPADAPTER'
  | 'PULID'
  | 'EVA_CLIP'
  | 'FACEANALYSIS'
  | 'FACE_MODEL'
  | 'FACE_BOOST'
  | 'POSE_KEYPOINT'
  | 'FL2MODEL'
  | 'PEFTLORA'
  | 'JSON'
  | 'PHOTOMAKER'
  | 'INSIGHTFACE'
  | 'INSTANTID'
  | 'SAM2MODEL';

/**
 * Values an output may carry besides LinkType: text (a caption) goes to an output node as is, a
 * number (TrainLoraNode's step count) to a forced input.
 */
export type OutputType = LinkType | 'STRING' | 'INT';

/** Values written into the graph (widgets); COMBO is one of a list the server declares. */
export type WidgetType = 'INT' | 'FLOAT' | 'STRING' | 'BOOLEAN' | 'COMBO';

/** `*` takes a link of any type (PreviewAny shows whatever it is given). */
export type InputType = LinkType | WidgetType | '*';

export interface NodeTyping {
  /** Required inputs. */
  readonly inputs: Readonly<Record<string, InputType>>;
  readonly optional?: Readonly<Record<string, InputType>>;
  /** Output slots in order. */
  readonly outputs: readonly OutputType[];
}

/**
 * The node packs' classes the compilers use, typed as each pack's definitions under
 * `packages/comfyui-fake/comfyui-packs/` declare them (a test holds the two together, as for the
 * core classes).
 */
const PACK_NODE_TYPES = {
  // ComfyUI_IPAdapter_plus
  IPAdapterModelLoader: { inputs: { ipadapter_file: 'COMBO' }, outputs: ['IPADAPTER'] },
  IPAdapterAdvanced: {
    inputs: {
      model: 'MODEL',
      ipadapter: 'IPADAPTER',
      image: 'IMAGE',
      weight: 'FLOAT',
      weight_type: 'COMBO',
      combine_embeds: 'COMBO',
      start_at: 'FLOAT',
      end_at: 'FLOAT',
      embeds_scaling: 'COMBO',
    },
    optional: { image_negative: 'IMAGE', attn_mask: 'MASK', clip_vision: 'CLIP_VISION' },
    outputs: ['MODEL'],
  },
  IPAdapterInsightFaceLoader: {
    inputs: { model_name: 'COMBO', provider: 'COMBO' },
    outputs: ['INSIGHTFACE'],
  },
  IPAdapterFaceID: {
    inputs: {
      model: 'MODEL',
      ipadapter: 'IPADAPTER',
      image: 'IMAGE',
      weight: 'FLOAT',
      weight_faceidv2: 'FLOAT',
      weight_type: 'COMBO',
      combine_embeds: 'COMBO',
      start_at: 'FLOAT',
      end_at: 'FLOAT',
      embeds_scaling: 'COMBO',
    },
    optional: {
      image_negative: 'IMAGE',
      attn_mask: 'MASK',
      clip_vision: 'CLIP_VISION',
      insightface: 'INSIGHTFACE',
    },
    outputs: ['MODEL', 'IMAGE'],
  },
  // ComfyUI_InstantID
  InstantIDModelLoader: { inputs: { instantid_file: 'COMBO' }, outputs: ['INSTANTID'] },
  InstantIDFaceAnalysis: { inputs: { provider: 'COMBO' }, outputs: ['FACEANALYSIS'] },
  ApplyInstantID: {
    inputs: {
      instantid: 'INSTANTID',
      insightface: 'FACEANALYSIS',
      control_net: 'CONTROL_NET',
      image: 'IMAGE',
      model: 'MODEL',
      positive: 'CONDITIONING',
      negative: 'CONDITIONING',
      weight: 'FLOAT',
      start_at: 'FLOAT',
      end_at: 'FLOAT',
    },
    optional: { image_kps: 'IMAGE', mask: 'MASK' },
    outputs: ['MODEL', 'CONDITIONING', 'CONDITIONING'],
  },
  // ComfyUI-RMBG
  RMBG: {
    inputs: { image: 'IMAGE', model: 'COMBO' },
    optional: {
      sensitivity: 'FLOAT',
      process_res: 'INT',
      mask_blur: 'INT',
      mask_offset: 'INT',
      invert_output: 'BOOLEAN',
      refine_foreground: 'BOOLEAN',
      background: 'COMBO',
    },
    outputs: ['IMAGE', 'MASK', 'IMAGE'],
  },
  ClothesSegment: {
    inputs: { images: 'IMAGE' },
    optional: {
      Hat: 'BOOLEAN',
      Hair: 'BOOLEAN',
      Face: 'BOOLEAN',
      Sunglasses: 'BOOLEAN',
      'Upper-clothes': 'BOOLEAN',
      Skirt: 'BOOLEAN',
      Dress: 'BOOLEAN',
      Belt: 'BOOLEAN',
      Pants: 'BOOLEAN',
      'Left-arm': 'BOOLEAN',
      'Right-arm': 'BOOLEAN',
      'Left-leg': 'BOOLEAN',
      'Right-leg': 'BOOLEAN',
      Bag: 'BOOLEAN',
      Scarf: 'BOOLEAN',
      'Left-shoe': 'BOOLEAN',
      'Right-shoe': 'BOOLEAN',
      Background: 'BOOLEAN',
      process_res: 'INT',
      mask_blur: 'INT',
      mask_offset: 'INT',
      invert_output: 'BOOLEAN',
      background: 'COMBO',
    },
    outputs: ['IMAGE', 'MASK', 'IMAGE'],
  },
  AILab_LamaRemover: {
    inputs: { images: 'IMAGE', masks: 'MASK', removal_strength: 'INT', edge_smoothness: 'INT' },
    outputs: ['IMAGE'],
  },
  // ComfyUI_CatVTON_Wrapper
  CatVTONWrapper: {
    inputs: {
      image: 'IMAGE',
      mask: 'MASK',
      refer_image: 'IMAGE',
      mask_grow: 'INT',
      mixed_precision: 'COMBO',
      seed: 'INT',
      steps: 'INT',
      cfg: 'FLOAT',
    },
    outputs: ['IMAGE'],
  },
  // ComfyUI-segment-anything-2
  DownloadAndLoadSAM2Model: {
    inputs: { model: 'COMBO', segmentor: 'COMBO', device: 'COMBO', precision: 'COMBO' },
    outputs: ['SAM2MODEL'],
  },
  Sam2Segmentation: {
    inputs: { sam2_model: 'SAM2MODEL', image: 'IMAGE', keep_model_loaded: 'BOOLEAN' },
    optional: {
      coordinates_positive: 'STRING',
      coordinates_negative: 'STRING',
      individual_objects: 'BOOLEAN',
      mask: 'MASK',
    },
    outputs: ['MASK'],
  },
  // ComfyUI-ReActor
  ReActorFaceSwap: {
    inputs: {
      enabled: 'BOOLEAN',
      input_image: 'IMAGE',
      swap_model: 'COMBO',
      facedetection: 'COMBO',
      face_restore_model: 'COMBO',
      face_restore_visibility: 'FLOAT',
      codeformer_weight: 'FLOAT',
      detect_gender_input: 'COMBO',
      detect_gender_source: 'COMBO',
      input_faces_index: 'STRING',
      source_faces_index: 'STRING',
      console_log_level: 'COMBO',
    },
    optional: { source_image: 'IMAGE', face_model: 'FACE_MODEL', face_boost: 'FACE_BOOST' },
    outputs: ['IMAGE', 'FACE_MODEL', 'IMAGE'],
  },
  // ComfyUI-IC-Light (kijai)
  LoadAndApplyICLightUnet: { inputs: { model: 'MODEL', model_path: 'COMBO' }, outputs: ['MODEL'] },
  ICLightConditioning: {
    inputs: {
      positive: 'CONDITIONING',
      negative: 'CONDITIONING',
      vae: 'VAE',
      foreground: 'LATENT',
      multiplier: 'FLOAT',
    },
    optional: { opt_background: 'LATENT' },
    outputs: ['CONDITIONING', 'CONDITIONING', 'LATENT'],
  },
  LightSource: {
    inputs: {
      light_position: 'COMBO',
      multiplier: 'FLOAT',
      start_color: 'STRING',
      end_color: 'STRING',
      width: 'INT',
      height: 'INT',
    },
    optional: { batch_size: 'INT', prev_image: 'IMAGE' },
    outputs: ['IMAGE'],
  },
  // comfyui_controlnet_aux
  OpenposePreprocessor: {
    inputs: { image: 'IMAGE' },
    optional: {
      detect_hand: 'COMBO',
      detect_body: 'COMBO',
      detect_face: 'COMBO',
      resolution: 'INT',
      scale_stick_for_xinsr_cn: 'COMBO',
    },
    outputs: ['IMAGE', 'POSE_KEYPOINT'],
  },
  'MiDaS-DepthMapPreprocessor': {
    inputs: { image: 'IMAGE' },
    optional: { a: 'FLOAT', bg_threshold: 'FLOAT', resolution: 'INT' },
    outputs: ['IMAGE'],
  },
  // ComfyUI-Florence2
  DownloadAndLoadFlorence2Model: {
    inputs: { model: 'COMBO', precision: 'COMBO', attention: 'COMBO' },
    optional: { lora: 'PEFTLORA', convert_to_safetensors: 'BOOLEAN' },
    outputs: ['FL2MODEL'],
  },
  Florence2Run: {
    inputs: {
      image: 'IMAGE',
      florence2_model: 'FL2MODEL',
      text_input: 'STRING',
      task: 'COMBO',
      fill_mask: 'BOOLEAN',
    },
    optional: {
      keep_model_loaded: 'BOOLEAN',
      max_new_tokens: 'INT',
      num_beams: 'INT',
      do_sample: 'BOOLEAN',
      output_mask_select: 'STRING',
      seed: 'INT',
    },
    outputs: ['IMAGE', 'MASK', 'STRING', 'JSON'],
  },
  ReActorRestoreFace: {
    inputs: {
      image: 'IMAGE',
      facedetection: 'COMBO',
      model: 'COMBO',
      visibility: 'FLOAT',
      codeformer_weight: 'FLOAT',
    },
    outputs: ['IMAGE'],
  },
  // PuLID_ComfyUI
  PulidModelLoader: { inputs: { pulid_file: 'COMBO' }, outputs: ['PULID'] },
  PulidInsightFaceLoader: { inputs: { provider: 'COMBO' }, outputs: ['FACEANALYSIS'] },
  PulidEvaClipLoader: { inputs: {}, outputs: ['EVA_CLIP'] },
  ApplyPulid: {
    inputs: {
      model: 'MODEL',
      pulid: 'PULID',
      eva_clip: 'EVA_CLIP',
      face_analysis: 'FACEANALYSIS',
      image: 'IMAGE',
      method: 'COMBO',
      weight: 'FLOAT',
      start_at: 'FLOAT',
      end_at: 'FLOAT',
    },
    optional: { attn_mask: 'MASK' },
    outputs: ['MODEL'],
  },
  // comfyui_jankhidiffusion
  ApplyRAUNetSimple: {
    inputs: {
      model: 'MODEL',
      model_type: 'COMBO',
      res_mode: 'COMBO',
      upscale_mode: 'COMBO',
      ca_upscale_mode: 'COMBO',
    },
    outputs: ['MODEL'],
  },
  ApplyMSWMSAAttentionSimple: { inputs: { model: 'MODEL', model_type: 'COMBO' }, outputs: ['MODEL'] },
  // style_aligned_comfy
  StyleAlignedBatchAlign: {
    inputs: { model: 'MODEL', share_norm: 'COMBO', share_attn: 'COMBO', scale: 'FLOAT' },
    outputs: ['MODEL'],
  },
} as const satisfies Record<string, NodeTyping>;

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
  ModelSamplingDiscrete: {
    inputs: { model: 'MODEL', sampling: 'COMBO', zsnr: 'BOOLEAN' },
    outputs: ['MODEL'],
  },
  ModelSamplingFlux: {
    inputs: { model: 'MODEL', max_shift: 'FLOAT', base_shift: 'FLOAT', width: 'INT', height: 'INT' },
    outputs: ['MODEL'],
  },

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
  LatentUpscale: {
    inputs: { samples: 'LATENT', upscale_method: 'COMBO', width: 'INT', height: 'INT', crop: 'COMBO' },
    outputs: ['LATENT'],
  },
  SetLatentNoiseMask: { inputs: { samples: 'LATENT', mask: 'MASK' }, outputs: ['LATENT'] },
  KSamplerAdvanced: {
    inputs: {
      model: 'MODEL',
      add_noise: 'COMBO',
      noise_seed: 'INT',
      steps: 'INT',
      cfg: 'FLOAT',
      sampler_name: 'COMBO',
      scheduler: 'COMBO',
      positive: 'CONDITIONING',
      negative: 'CONDITIONING',
      latent_image: 'LATENT',
      start_at_step: 'INT',
      end_at_step: 'INT',
      return_with_leftover_noise: 'COMBO',
    },
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
  MaskToImage: { inputs: { mask: 'MASK' }, outputs: ['IMAGE'] },
  ImageBlur: { inputs: { image: 'IMAGE', blur_radius: 'INT', sigma: 'FLOAT' }, outputs: ['IMAGE'] },
  ImageScale: {
    inputs: { image: 'IMAGE', upscale_method: 'COMBO', width: 'INT', height: 'INT', crop: 'COMBO' },
    outputs: ['IMAGE'],
  },
  ImageScaleBy: {
    inputs: { image: 'IMAGE', upscale_method: 'COMBO', scale_by: 'FLOAT' },
    outputs: ['IMAGE'],
  },
  ImageUpscaleWithModel: { inputs: { upscale_model: 'UPSCALE_MODEL', image: 'IMAGE' }, outputs: ['IMAGE'] },
  ImageCrop: {
    inputs: { image: 'IMAGE', width: 'INT', height: 'INT', x: 'INT', y: 'INT' },
    outputs: ['IMAGE'],
  },
  EmptyImage: {
    inputs: { width: 'INT', height: 'INT', batch_size: 'INT', color: 'INT' },
    outputs: ['IMAGE'],
  },
  SolidMask: { inputs: { value: 'FLOAT', width: 'INT', height: 'INT' }, outputs: ['MASK'] },
  CropMask: {
    inputs: { mask: 'MASK', x: 'INT', y: 'INT', width: 'INT', height: 'INT' },
    outputs: ['MASK'],
  },
  FeatherMask: {
    inputs: { mask: 'MASK', left: 'INT', top: 'INT', right: 'INT', bottom: 'INT' },
    outputs: ['MASK'],
  },
  ImagePadForOutpaint: {
    inputs: { image: 'IMAGE', left: 'INT', top: 'INT', right: 'INT', bottom: 'INT', feathering: 'INT' },
    outputs: ['IMAGE', 'MASK'],
  },
  Canny: { inputs: { image: 'IMAGE', low_threshold: 'FLOAT', high_threshold: 'FLOAT' }, outputs: ['IMAGE'] },
  SaveImage: { inputs: { images: 'IMAGE', filename_prefix: 'STRING' }, outputs: [] },
  ImageBatch: { inputs: { image1: 'IMAGE', image2: 'IMAGE' }, outputs: ['IMAGE'] },
  RepeatImageBatch: { inputs: { image: 'IMAGE', amount: 'INT' }, outputs: ['IMAGE'] },
  PreviewAny: { inputs: { source: '*' }, outputs: [] },
  CLIPVisionLoader: { inputs: { clip_name: 'COMBO' }, outputs: ['CLIP_VISION'] },
  ImageScaleToTotalPixels: {
    inputs: { image: 'IMAGE', upscale_method: 'COMBO', megapixels: 'FLOAT' },
    outputs: ['IMAGE'],
  },
  ImageCompositeMasked: {
    inputs: { destination: 'IMAGE', source: 'IMAGE', x: 'INT', y: 'INT', resize_source: 'BOOLEAN' },
    optional: { mask: 'MASK' },
    outputs: ['IMAGE'],
  },
  InvertMask: { inputs: { mask: 'MASK' }, outputs: ['MASK'] },
  MaskComposite: {
    inputs: { destination: 'MASK', source: 'MASK', x: 'INT', y: 'INT', operation: 'COMBO' },
    outputs: ['MASK'],
  },
  GrowMask: { inputs: { mask: 'MASK', expand: 'INT', tapered_corners: 'BOOLEAN' }, outputs: ['MASK'] },
  PhotoMakerLoader: { inputs: { photomaker_model_name: 'COMBO' }, outputs: ['PHOTOMAKER'] },
  PhotoMakerEncode: {
    inputs: { photomaker: 'PHOTOMAKER', image: 'IMAGE', clip: 'CLIP', text: 'STRING' },
    outputs: ['CONDITIONING'],
  },

  // Training (comfy_extras/nodes_train.py)
  TrainLoraNode: {
    inputs: {
      model: 'MODEL',
      latents: 'LATENT',
      positive: 'CONDITIONING',
      batch_size: 'INT',
      grad_accumulation_steps: 'INT',
      steps: 'INT',
      learning_rate: 'FLOAT',
      rank: 'INT',
      optimizer: 'COMBO',
      loss_function: 'COMBO',
      seed: 'INT',
      training_dtype: 'COMBO',
      lora_dtype: 'COMBO',
      algorithm: 'COMBO',
      gradient_checkpointing: 'BOOLEAN',
      existing_lora: 'COMBO',
    },
    outputs: ['MODEL', 'LORA_MODEL', 'LOSS_MAP', 'INT'],
  },
  SaveLoRANode: { inputs: { lora: 'LORA_MODEL', prefix: 'STRING' }, optional: { steps: 'INT' }, outputs: [] },
  LoraModelLoader: {
    inputs: { model: 'MODEL', lora: 'LORA_MODEL', strength_model: 'FLOAT' },
    outputs: ['MODEL'],
  },

  ...PACK_NODE_TYPES,
} as const satisfies Record<string, NodeTyping>;

export type NodeClass = keyof typeof NODE_TYPES;
