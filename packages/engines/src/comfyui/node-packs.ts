/**
 * The ComfyUI custom node packs some compilers use: where each comes from, and the file under
 * `comfyui-packs/` that holds its node definitions as `/object_info` answers them (read from the
 * pack's source at the commit that folder's README names). A compiler that uses a pack lists it in
 * `requires.packs`, so the docs and `/health` say what a server must have installed.
 */
export const NODE_PACKS = {
  ComfyUI_IPAdapter_plus: {
    repository: 'https://github.com/cubiq/ComfyUI_IPAdapter_plus',
    definitions: 'ipadapter-plus.json',
  },
  'ComfyUI-ReActor': {
    repository: 'https://github.com/Gourieff/ComfyUI-ReActor',
    definitions: 'reactor.json',
  },
  'ComfyUI-IC-Light': {
    repository: 'https://github.com/kijai/ComfyUI-IC-Light',
    definitions: 'ic-light.json',
  },
  comfyui_controlnet_aux: {
    repository: 'https://github.com/Fannovel16/comfyui_controlnet_aux',
    definitions: 'controlnet-aux.json',
  },
  'ComfyUI-Florence2': {
    repository: 'https://github.com/kijai/ComfyUI-Florence2',
    definitions: 'florence2.json',
  },
  PuLID_ComfyUI: { repository: 'https://github.com/cubiq/PuLID_ComfyUI', definitions: 'pulid.json' },
  comfyui_jankhidiffusion: {
    repository: 'https://github.com/blepping/comfyui_jankhidiffusion',
    definitions: 'jankhidiffusion.json',
  },
  ComfyUI_InstantID: {
    repository: 'https://github.com/cubiq/ComfyUI_InstantID',
    definitions: 'instantid.json',
  },
  'ComfyUI-RMBG': { repository: 'https://github.com/1038lab/ComfyUI-RMBG', definitions: 'rmbg.json' },
  ComfyUI_CatVTON_Wrapper: {
    repository: 'https://github.com/chflame163/ComfyUI_CatVTON_Wrapper',
    definitions: 'catvton.json',
  },
  'ComfyUI-segment-anything-2': {
    repository: 'https://github.com/kijai/ComfyUI-segment-anything-2',
    definitions: 'segment-anything-2.json',
  },
} as const satisfies Record<string, { repository: string; definitions: string }>;

export type NodePack = keyof typeof NODE_PACKS;

export const ALL_NODE_PACKS = Object.keys(NODE_PACKS) as NodePack[];

/** The packs a pipeline needs, as `requires.packs` lists them. */
export function packNeeds(...packs: readonly NodePack[]): { name: NodePack; repository: string }[] {
  return [...new Set(packs)].map((name) => ({ name, repository: NODE_PACKS[name].repository }));
}
