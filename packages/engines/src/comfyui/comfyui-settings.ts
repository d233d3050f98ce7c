/**
 * The comfyui engine's two settings: COMFYUI_URLS (which servers) and COMFYUI_CHECKPOINTS (which
 * checkpoint file each model id of the API loads). Both are read once at start; a malformed value
 * stops start-up with a message naming the setting and the part that is wrong.
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

/**
 * COMFYUI_CHECKPOINTS: the API's model ids to checkpoint file names on the servers, e.g.
 * `sd1.5=v1-5-pruned-emaonly.safetensors,sdxl=sd_xl_base_1.0.safetensors`.
 */
export function parseCheckpoints(value: string | undefined): Record<string, string> {
  const checkpoints: Record<string, string> = {};
  for (const part of (value ?? '').split(',')) {
    if (!part.trim()) continue;
    const equals = part.indexOf('=');
    const id = part.slice(0, Math.max(0, equals)).trim();
    const file = part.slice(equals + 1).trim();
    if (equals < 0 || !id || !file) {
      throw new Error(`COMFYUI_CHECKPOINTS: "${part.trim()}" is not <model id>=<checkpoint file>`);
    }
    if (id in checkpoints) throw new Error(`COMFYUI_CHECKPOINTS: model id "${id}" is listed twice`);
    checkpoints[id] = file;
  }
  return checkpoints;
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
