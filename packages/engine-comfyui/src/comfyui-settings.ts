import {
  BUILT_IN_FAMILIES,
  CHECKPOINT_FAMILIES,
  CHECKPOINT_ROLES,
  type CheckpointFamily,
  FIXED_MODEL_IDS,
  isCheckpointFamily,
  isCheckpointRole,
  ROLE_IDS,
  roleKey,
} from './checkpoint-roles.ts';
import { DEFAULT_STALL_MS } from './client/comfy-client.ts';

/**
 * The comfyui engine's settings: COMFYUI_URLS (which servers), COMFYUI_CHECKPOINTS (which
 * checkpoint file each model id of the API loads, the family of the operator's own ids, and the
 * files of roles such as inpainting), COMFYUI_MODELS_DIR, MODEL_MAX_BYTES and COMFYUI_STALL_SECONDS. All are read once at
 * start; a malformed value stops start-up with a message naming the setting and the part that is
 * wrong.
 */

/** One ComfyUI server of COMFYUI_URLS. */
export interface ServerEntry {
  /**
   * Its name: the one given (`gpu-1=http://…`), else its `host:port`. Servers that share a name
   * form a group; an enterprise `server_id` names a group.
   */
  readonly name: string;
  /** Its base URL, without a trailing slash. */
  readonly url: string;
}

/** What a server name may hold: the characters of a host:port, so the two kinds look alike. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;

/**
 * COMFYUI_URLS: comma-separated servers, each `URL` or `NAME=URL`, e.g.
 * `gpu-1=http://10.0.0.5:8188,http://10.0.0.6:8188`.
 */
export function parseServerList(value: string | undefined): ServerEntry[] {
  const servers: ServerEntry[] = [];
  for (const part of (value ?? '').split(',')) {
    const item = part.trim();
    if (!item) continue;
    const equals = item.indexOf('=');
    const named = equals > 0 && !item.slice(0, equals).includes('://');
    const given = named ? item.slice(0, equals).trim() : undefined;
    const address = named ? item.slice(equals + 1).trim() : item;
    let url: URL;
    try {
      url = new URL(address);
    } catch {
      throw new Error(`COMFYUI_URLS: "${item}" is not URL or NAME=URL (e.g. gpu-1=http://10.0.0.5:8188)`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new Error(`COMFYUI_URLS: "${address}" must be an http:// or https:// URL`);
    }
    if (url.search || url.hash || url.username || url.password) {
      throw new Error(
        `COMFYUI_URLS: "${address}" must be a plain base URL (no query, fragment or credentials)`,
      );
    }
    const name = given ?? url.host;
    if (!NAME.test(name)) {
      throw new Error(`COMFYUI_URLS: server name "${name}" may hold only letters, digits and . _ : -`);
    }
    const base = url.href.replace(/\/+$/, '');
    if (servers.some((server) => server.url === base)) {
      throw new Error(`COMFYUI_URLS: ${base} is listed twice`);
    }
    servers.push({ name, url: base });
  }
  return servers;
}

/** COMFYUI_CHECKPOINTS as the engine reads it. */
export interface CheckpointSettings {
  /**
   * Model id → checkpoint file, and `<id>:<role>` → the file of that id in a role (roles named by
   * an id of earlier releases, `sdxl-lightning`, `flux-dev`, `flux-schnell`, kept under that id).
   */
  readonly checkpoints: Record<string, string>;
  /** The operator's model ids whose family the setting declares (`my-xl:sdxl=…`). */
  readonly families: Record<string, CheckpointFamily>;
}

const ENTRY_FORMS = `<model id>=<checkpoint file> (or <model id>:<family>=<file>, family ${CHECKPOINT_FAMILIES.join(', ')}, or <model id or family>:<role>=<file>)`;

/**
 * COMFYUI_CHECKPOINTS: the files the API's model ids load on the servers, the families of the
 * operator's own ids, and the files of the roles (checkpoint-roles.ts has the words), e.g.
 * `sdxl=sd_xl_base_1.0.safetensors,sdxl:inpainting=sd_xl_inpaint_0.1.safetensors,my-xl:sdxl=juggernautXL.safetensors`.
 * Every value of earlier releases (`<model id>=<file>`) means what it meant.
 */
export function parseCheckpointSettings(value: string | undefined): CheckpointSettings {
  const checkpoints: Record<string, string> = {};
  const families: Record<string, CheckpointFamily> = {};
  /** The entry as written that set each key, for "listed twice". */
  const written: Record<string, string> = {};
  /** Inpainting roles of the operator's ids: those ids must be mapped too (checked at the end). */
  const rolesOfMapped: { id: string; entry: string }[] = [];
  for (const part of (value ?? '').split(',')) {
    const entry = part.trim();
    if (!entry) continue;
    const equals = entry.indexOf('=');
    const name = entry.slice(0, Math.max(0, equals)).trim();
    const file = entry.slice(equals + 1).trim();
    if (equals < 0 || !name || !file) {
      throw new Error(`COMFYUI_CHECKPOINTS: "${entry}" is not ${ENTRY_FORMS}`);
    }
    let key = name;
    /** What the key names, where it is not a model id's own file. */
    let label: string | undefined;
    const colon = name.indexOf(':');
    // An id of earlier releases that names a role (`sdxl-lightning`) is that role's entry.
    const legacy = Object.entries(ROLE_IDS)
      .find(([, id]) => id === name)?.[0]
      .split(':');
    if (legacy) label = `the ${legacy[1]} role of "${legacy[0]}"`;
    if (colon >= 0) {
      const id = name.slice(0, colon).trim();
      const word = name.slice(colon + 1).trim();
      if (!id || !word || word.includes(':')) {
        throw new Error(`COMFYUI_CHECKPOINTS: "${entry}" is not ${ENTRY_FORMS}`);
      }
      if (isCheckpointFamily(word)) {
        const builtIn = builtInFamily(id);
        if (builtIn !== undefined && builtIn !== word) {
          throw new Error(
            `COMFYUI_CHECKPOINTS: "${entry}": model id "${id}" is the built-in ${builtIn} model`,
          );
        }
        if (FIXED_MODEL_IDS.includes(id) || id === 'flux') {
          throw new Error(
            `COMFYUI_CHECKPOINTS: "${entry}": "${id}" is a pipeline's own model, not an SD model id`,
          );
        }
        key = id;
        if (builtIn === undefined) families[id] = word;
      } else if (isCheckpointRole(word)) {
        const role = CHECKPOINT_ROLES[word];
        const allowed = role.ids ?? ['sd1.5', 'sdxl', 'a mapped SD model id'];
        const fits = role.ids
          ? role.ids.includes(id)
          : id !== 'flux' && !FIXED_MODEL_IDS.includes(id) && !isCheckpointRole(id);
        if (!fits) {
          throw new Error(
            `COMFYUI_CHECKPOINTS: "${entry}": the ${word} role (${role.uses}) is one of ${allowed.join(', ')}, not of "${id}"`,
          );
        }
        if (!role.ids && builtInFamily(id) === undefined) rolesOfMapped.push({ id, entry });
        key = roleKey(id, word);
        label = `the ${word} role of "${id}"`;
      } else {
        const roles = Object.keys(CHECKPOINT_ROLES).join(', ');
        throw new Error(
          `COMFYUI_CHECKPOINTS: "${entry}": "${word}" is neither a model family (${CHECKPOINT_FAMILIES.join(', ')}) nor a role (${roles})`,
        );
      }
    }
    if (Object.hasOwn(checkpoints, key)) {
      const what = label ?? `model id "${key}"`;
      throw new Error(`COMFYUI_CHECKPOINTS: ${what} is listed twice ("${written[key]}", "${entry}")`);
    }
    checkpoints[key] = file;
    written[key] = entry;
  }
  for (const { id, entry } of rolesOfMapped) {
    if (!Object.hasOwn(checkpoints, id)) {
      throw new Error(
        `COMFYUI_CHECKPOINTS: "${entry}" gives model id "${id}" a role, but "${id}" itself is not mapped (add ${id}=<file> or ${id}:<family>=<file>)`,
      );
    }
  }
  return { checkpoints, families };
}

function builtInFamily(id: string): CheckpointFamily | undefined {
  return Object.hasOwn(BUILT_IN_FAMILIES, id) ? BUILT_IN_FAMILIES[id] : undefined;
}

/** COMFYUI_CHECKPOINTS' files alone: model ids (and `<id>:<role>` keys) to checkpoint files. */
export function parseCheckpoints(value: string | undefined): Record<string, string> {
  return parseCheckpointSettings(value).checkpoints;
}

/**
 * COMFYUI_MODELS_DIR: the ComfyUI `models/` folder the servers read, where the engine writes the
 * owners' model files. One path shared by every server (one volume mounted on all of them), and/or
 * a folder of a server's own by its name in COMFYUI_URLS:
 * `/mnt/shared/models,gpu-1=/mnt/a/models,gpu-2=/mnt/b/models`. A server without a folder of its
 * own reads the shared one; a server with neither cannot be handed a model file.
 */
export interface ModelFolders {
  /** The folder every server without one of its own reads; null when there is none. */
  readonly shared: string | null;
  /** Server name → its own folder. */
  readonly byServer: Readonly<Record<string, string>>;
}

export function parseModelsDir(
  value: string | undefined,
  servers: readonly ServerEntry[],
): ModelFolders | null {
  let shared: string | null = null;
  const byServer: Record<string, string> = {};
  for (const part of (value ?? '').split(',')) {
    const item = part.trim();
    if (!item) continue;
    const equals = item.indexOf('=');
    const name = equals > 0 ? item.slice(0, equals).trim() : null;
    const folder = equals > 0 ? item.slice(equals + 1).trim() : item;
    if (!folder.startsWith('/')) {
      throw new Error(`COMFYUI_MODELS_DIR: "${item}" is not an absolute path or NAME=/absolute/path`);
    }
    const clean = folder.length > 1 ? folder.replace(/\/+$/, '') : folder;
    if (name === null) {
      if (shared !== null)
        throw new Error('COMFYUI_MODELS_DIR: more than one shared folder (a path without NAME=)');
      shared = clean;
      continue;
    }
    if (!servers.some((server) => server.name === name)) {
      throw new Error(`COMFYUI_MODELS_DIR: "${name}" is not the name of a server in COMFYUI_URLS`);
    }
    if (name in byServer) throw new Error(`COMFYUI_MODELS_DIR: server "${name}" is listed twice`);
    byServer[name] = clean;
  }
  return shared === null && Object.keys(byServer).length === 0 ? null : { shared, byServer };
}

/** The default of MODEL_MAX_BYTES: 8 GiB holds an SDXL checkpoint in fp32 (about 7 GB). */
export const DEFAULT_MODEL_MAX_BYTES = 8 * 1024 ** 3;

/** MODEL_MAX_BYTES: the largest model file a load_model downloads, in bytes (default 8 GiB). */
export function parseModelMaxBytes(value: string | undefined): number {
  if (value === undefined || value.trim() === '') return DEFAULT_MODEL_MAX_BYTES;
  const bytes = Number(value);
  if (!Number.isSafeInteger(bytes) || bytes <= 0) {
    throw new Error(`MODEL_MAX_BYTES=${value} is not a positive whole number of bytes`);
  }
  return bytes;
}

/**
 * COMFYUI_STALL_SECONDS: how long a running prompt may go without progress (no message about it,
 * no history entry) before it is interrupted and its job runs on another server; in milliseconds.
 */
export function parseStallMs(value: string | undefined): number {
  if (value === undefined || value.trim() === '') return DEFAULT_STALL_MS;
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds <= 0) {
    throw new Error(`COMFYUI_STALL_SECONDS=${value} is not a positive number of seconds`);
  }
  return Math.round(seconds * 1000);
}
