/**
 * The words of COMFYUI_CHECKPOINTS, shared by its parser (comfyui-settings.ts) and the compilers
 * (chains/model-files.ts): the model families a mapped id may declare, and the roles a checkpoint
 * may be mapped for besides a model id's own.
 *
 * An entry is `<key>=<file>`, the key one of
 * - `<model id>`: the file that id loads (`sd1.5`, `sdxl`, `sd3`, `sd3.5`, or an id of the operator's own);
 * - `<model id>:<family>` (`sd1.5`, `sdxl`, `sdxl-lightning`, `sdxl-turbo`, `sd3`, `sd3.5`): an id of
 *   the operator's own and its model family, whose profile (model-profiles.ts: size, steps, cfg,
 *   sampler, adapters) its graphs follow; the API refuses it at submission where the pipeline
 *   cannot draw that family or its adapters fit another;
 * - `<model id or family>:<role>`: the file loaded in that role instead of the id's own: `inpainting`
 *   (`sd1.5`, `sdxl` or a mapped SD id; the inpainting paths and the repaint steps), `lightning`
 *   (`sdxl`; `/instamodel/v1`), `dev` and `schnell` (`flux`; `/generate/v3`), `lcm` (`sd1.5`,
 *   `sdxl`: the LCM LoRA `scheduler: "LCMScheduler"` samples with, a file of `models/loras`). A
 *   role not mapped loads the id's own file, as before roles existed; `lcm` has no such file, and
 *   LCMScheduler is refused without it.
 */

/** The model families a checkpoint of COMFYUI_CHECKPOINTS may declare: the profiles of a checkpoint file. */
export type CheckpointFamily = 'sd1.5' | 'sdxl' | 'sdxl-lightning' | 'sdxl-turbo' | 'sd3' | 'sd3.5';

export const CHECKPOINT_FAMILIES: readonly CheckpointFamily[] = [
  'sd1.5',
  'sdxl',
  'sdxl-lightning',
  'sdxl-turbo',
  'sd3',
  'sd3.5',
];

/**
 * The built-in model ids, each its family's own model: a request may name them as `model_id`
 * (the SD paths refuse those their graph cannot draw, at submission).
 */
export const BUILT_IN_FAMILIES: Readonly<Record<string, CheckpointFamily>> = {
  'sd1.5': 'sd1.5',
  sdxl: 'sdxl',
  'sdxl-lightning': 'sdxl-lightning',
  sd3: 'sd3',
  'sd3.5': 'sd3.5',
};

export type CheckpointRole = 'inpainting' | 'lightning' | 'dev' | 'schnell' | 'lcm';

/**
 * Each role and whose it is: `ids` lists the keys it may follow (absent: `sd1.5`, `sdxl`, or an SD
 * model id the setting maps), `uses` says what loads it, for errors and docs.
 */
export const CHECKPOINT_ROLES: Readonly<
  Record<CheckpointRole, { readonly ids?: readonly string[]; readonly uses: string }>
> = {
  inpainting: {
    uses: '/sd/inpainting/v1, /sdxl/inpainting/v1, /outpainting/v1 and the repaint of /bgchanger/v1, /modelswitch/v1, /inpaint_anything/v1',
  },
  lightning: { ids: ['sdxl'], uses: '/instamodel/v1' },
  dev: { ids: ['flux'], uses: '/generate/v3 (Flux Dev instead of Schnell)' },
  schnell: { ids: ['flux'], uses: '/generate/v3' },
  lcm: { ids: ['sd1.5', 'sdxl'], uses: 'scheduler LCMScheduler (the LCM LoRA, folder loras)' },
};

/**
 * The model ids of earlier releases that name a role: still accepted, and the key each role's
 * file is kept under, so `sdxl:lightning=x` and `sdxl-lightning=x` are one entry.
 */
export const ROLE_IDS: Readonly<Record<string, string>> = {
  'sdxl:lightning': 'sdxl-lightning',
  'flux:dev': 'flux-dev',
  'flux:schnell': 'flux-schnell',
};

/** The key a role's file is kept under in the checkpoints map. */
export function roleKey(id: string, role: CheckpointRole): string {
  return ROLE_IDS[`${id}:${role}`] ?? `${id}:${role}`;
}

/** Ids that name a pipeline's fixed model, not an SD model a request may name: they take no inpainting role. */
export const FIXED_MODEL_IDS: readonly string[] = ['sd3', 'sd3.5', ...Object.values(ROLE_IDS)];

export function isCheckpointFamily(word: string): word is CheckpointFamily {
  return (CHECKPOINT_FAMILIES as readonly string[]).includes(word);
}

export function isCheckpointRole(word: string): word is CheckpointRole {
  return Object.hasOwn(CHECKPOINT_ROLES, word);
}
