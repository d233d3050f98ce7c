import { randomUUID } from 'node:crypto';
import type { ComfyClient, ComfyServerStats, FileRef, ObjectInfo } from '../contracts.ts';
import { PromptFailedError, PromptRejectedError } from '../contracts.ts';
import { ComfyHttp, parseJson } from './comfy-http.ts';
import { ComfySocket } from './comfy-socket.ts';
import { cancelOnServer, type RunTiming, runPrompt } from './prompt-run.ts';

/** One ComfyUI server over HTTP and its WebSocket (see README.md for why our own client). */

export interface ComfyClientOptions {
  readonly url: string;
  /** The server's name in errors (`gpu-1`); host:port when absent. */
  readonly name?: string;
  /** Every HTTP request's limit (default 30 s). */
  readonly requestTimeoutMs?: number;
  /** The socket's connect limit before a prompt is sent anyway, followed by polling (default 5 s). */
  readonly connectTimeoutMs?: number;
  /** Silence about a running prompt after which `/history` is asked (default 5 s). */
  readonly silenceMs?: number;
  /** Checks in a row without an answer before the server counts as unavailable (default 3). */
  readonly maxFailedChecks?: number;
  /** First socket reconnect delay, doubling on each failure (default 250 ms). */
  readonly reconnectDelayMs?: number;
  /**
   * A running prompt with no progress for this long is interrupted and fails as stalled
   * (COMFYUI_STALL_SECONDS; default 300 s).
   */
  readonly stallMs?: number;
}

/** Abandoned prompts remembered per server: a server cut off for long holds no more of ours than this. */
const MAX_ABANDONED = 256;

/** COMFYUI_STALL_SECONDS' default: five minutes without a step is no slow step any sampler takes. */
export const DEFAULT_STALL_MS = 300_000;

export function createComfyClient(options: ComfyClientOptions): ComfyClient {
  const base = new URL(options.url);
  if (!base.pathname.endsWith('/')) base.pathname += '/';
  const name = options.name ?? base.host;
  const http = new ComfyHttp(base, name, options.requestTimeoutMs ?? 30_000);
  // One client id per client: the server sends this client's prompts' messages to its socket.
  const clientId = randomUUID();
  const socket = new ComfySocket({
    url: base,
    clientId,
    connectTimeoutMs: options.connectTimeoutMs ?? 5_000,
    reconnectDelayMs: options.reconnectDelayMs ?? 250,
    lingerMs: 5_000,
  });
  const timing: RunTiming = {
    silenceMs: options.silenceMs ?? 5_000,
    maxFailedChecks: options.maxFailedChecks ?? 3,
    stallMs: options.stallMs ?? DEFAULT_STALL_MS,
  };
  let closed = false;
  // Prompts given up on while the server did not answer; the newest few are kept.
  const abandoned = new Set<string>();

  return {
    name,
    url: options.url,

    async stats(signal): Promise<ComfyServerStats> {
      const [system, prompt] = await Promise.all([
        http.json<{ system?: { comfyui_version?: string }; devices?: { type?: unknown }[] }>(
          'GET',
          '/system_stats',
          { signal },
        ),
        http.json<{ exec_info?: { queue_remaining?: number } }>('GET', '/prompt', { signal }),
      ]);
      return {
        comfyuiVersion: system.system?.comfyui_version ?? 'unknown',
        queueRemaining: prompt.exec_info?.queue_remaining ?? 0,
        ...(typeof system.devices?.[0]?.type === 'string' ? { device: system.devices[0].type } : {}),
      };
    },

    objectInfo(signal): Promise<ObjectInfo> {
      return http.json<ObjectInfo>('GET', '/object_info', { signal });
    },

    async free(signal): Promise<void> {
      const { status } = await http.send('POST', '/free', {
        json: { unload_models: true, free_memory: true },
        signal,
      });
      if (status !== 200) throw http.unexpected(status, 'POST', '/free');
    },

    async retake(signal): Promise<number> {
      let taken = 0;
      for (const promptId of [...abandoned]) {
        if (!(await cancelOnServer(http, promptId, signal))) break;
        abandoned.delete(promptId);
        taken += 1;
      }
      return taken;
    },

    async models(folder, signal): Promise<string[]> {
      const path = `/models/${encodeURIComponent(folder)}`;
      const { status, body } = await http.send('GET', path, { signal });
      // 404: the server has no such folder, so nothing in it.
      if (status === 404) return [];
      if (status !== 200) throw http.unexpected(status, 'GET', path);
      return parseJson<string[]>(body, `GET ${path}`, name);
    },

    async upload(image, signal): Promise<string> {
      const form = new FormData();
      // No `overwrite`: a same-named file of another task must not change under it. ComfyUI keeps
      // an identical file's name and renames a different one (`x (1).png`): use the name it gives.
      form.append('image', new Blob([new Uint8Array(image.data)], { type: image.contentType }), image.name);
      const { status, body } = await http.send('POST', '/upload/image', { form, signal });
      if (status >= 400 && status < 500) {
        throw new PromptRejectedError(`the image '${image.name}' was refused (${status}) on server ${name}`);
      }
      if (status !== 200) throw http.unexpected(status, 'POST', '/upload/image');
      return parseJson<{ name: string }>(body, 'POST /upload/image', name).name;
    },

    run(prompt, runOptions) {
      if (closed) return Promise.reject(new Error(`the client of server ${name} is closed`));
      while (abandoned.size > MAX_ABANDONED) abandoned.delete(abandoned.values().next().value!);
      return runPrompt({ http, socket, clientId, timing, abandoned }, prompt, runOptions);
    },

    async view(file: FileRef, signal): Promise<Buffer> {
      const query = new URLSearchParams({
        filename: file.filename,
        subfolder: file.subfolder,
        type: file.type,
      });
      const { status, body } = await http.send('GET', `/view?${query}`, { signal });
      if (status === 404)
        throw new PromptFailedError(`the file '${file.filename}' is missing on server ${name}`);
      if (status !== 200) throw http.unexpected(status, 'GET', '/view');
      return body;
    },

    async close(): Promise<void> {
      closed = true;
      socket.close();
      http.close();
    },
  };
}
