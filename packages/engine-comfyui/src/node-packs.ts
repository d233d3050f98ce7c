/**
 * The ComfyUI custom node packs some compilers use, and where each comes from. A compiler that uses
 * a pack lists it in `requires.packs`, so the docs and `/health` say what a server must have
 * installed.
 */
export const NODE_PACKS = {
  ComfyUI_IPAdapter_plus: { repository: 'https://github.com/cubiq/ComfyUI_IPAdapter_plus' },
  'ComfyUI-ReActor': { repository: 'https://github.com/Gourieff/ComfyUI-ReActor' },
  'ComfyUI-IC-Light': { repository: 'https://github.com/kijai/ComfyUI-IC-Light' },
  comfyui_controlnet_aux: { repository: 'https://github.com/Fannovel16/comfyui_controlnet_aux' },
  'ComfyUI-Florence2': { repository: 'https://github.com/kijai/ComfyUI-Florence2' },
  PuLID_ComfyUI: { repository: 'https://github.com/cubiq/PuLID_ComfyUI' },
  comfyui_jankhidiffusion: { repository: 'https://github.com/blepping/comfyui_jankhidiffusion' },
  ComfyUI_InstantID: { repository: 'https://github.com/cubiq/ComfyUI_InstantID' },
  'ComfyUI-RMBG': { repository: 'https://github.com/1038lab/ComfyUI-RMBG' },
  ComfyUI_CatVTON_Wrapper: { repository: 'https://github.com/chflame163/ComfyUI_CatVTON_Wrapper' },
  'ComfyUI-segment-anything-2': { repository: 'https://github.com/kijai/ComfyUI-segment-anything-2' },
  style_aligned_comfy: { repository: 'https://github.com/brianfitzgerald/style_aligned_comfy' },
} as const satisfies Record<string, { repository: string }>;

export type NodePack = keyof typeof NODE_PACKS;

/**
 * The classes the compilers use from each pack (workflow/node-types.ts types them; a test holds
 * this list to the packs' definitions): a server that lists none of a pack's lacks the pack.
 */
export const NODE_PACK_CLASSES: Readonly<Record<NodePack, readonly string[]>> = {
  ComfyUI_IPAdapter_plus: [
    'IPAdapterModelLoader',
    'IPAdapterAdvanced',
    'IPAdapterInsightFaceLoader',
    'IPAdapterFaceID',
  ],
  'ComfyUI-ReActor': ['ReActorFaceSwap', 'ReActorRestoreFace'],
  'ComfyUI-IC-Light': ['LoadAndApplyICLightUnet', 'ICLightConditioning', 'LightSource'],
  comfyui_controlnet_aux: ['OpenposePreprocessor', 'MiDaS-DepthMapPreprocessor'],
  'ComfyUI-Florence2': ['DownloadAndLoadFlorence2Model', 'Florence2Run'],
  PuLID_ComfyUI: ['PulidModelLoader', 'PulidInsightFaceLoader', 'PulidEvaClipLoader', 'ApplyPulid'],
  comfyui_jankhidiffusion: ['ApplyRAUNetSimple', 'ApplyMSWMSAAttentionSimple'],
  ComfyUI_InstantID: ['InstantIDModelLoader', 'InstantIDFaceAnalysis', 'ApplyInstantID'],
  'ComfyUI-RMBG': ['RMBG', 'ClothesSegment', 'AILab_LamaRemover'],
  ComfyUI_CatVTON_Wrapper: ['CatVTONWrapper'],
  'ComfyUI-segment-anything-2': ['DownloadAndLoadSAM2Model', 'Sam2Segmentation'],
  style_aligned_comfy: ['StyleAlignedBatchAlign'],
};

/** The pack a class the compilers use comes from; undefined for a core class. */
export function packOfClass(classType: string): NodePack | undefined {
  return (Object.keys(NODE_PACK_CLASSES) as NodePack[]).find((pack) =>
    NODE_PACK_CLASSES[pack].includes(classType),
  );
}

export const ALL_NODE_PACKS = Object.keys(NODE_PACKS) as NodePack[];

/** A pack only some requests use, and which request fields need it. */
export interface OptionalPack {
  readonly pack: NodePack;
  /** The request fields that need it, as the needs table prints them: "only with `hidiffusion: true`". */
  readonly when: string;
}

export interface PackNeed {
  readonly name: NodePack;
  readonly repository: string;
  /** Absent: every request of the pipeline needs it. */
  readonly when?: string;
}

/**
 * The packs a pipeline needs, as `requires.packs` lists them: a plain name for a pack every request
 * uses, an OptionalPack for one only some fields call for, so an operator knows what is optional.
 */
export function packNeeds(...packs: readonly (NodePack | OptionalPack)[]): PackNeed[] {
  const needs = new Map<NodePack, PackNeed>();
  for (const use of packs) {
    const name = typeof use === 'string' ? use : use.pack;
    const when = typeof use === 'string' ? undefined : use.when;
    needs.set(name, { name, repository: NODE_PACKS[name].repository, ...(when ? { when } : {}) });
  }
  return [...needs.values()];
}
