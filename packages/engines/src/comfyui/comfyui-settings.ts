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
