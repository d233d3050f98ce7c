import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path/posix';
import type { ObjectInfo } from '@imagegen/engine-comfyui/engine';
import { SERVER_ERROR_TEXT, validatePrompt } from '../validation/validate-prompt.ts';
import type { FileStore } from './file-store.ts';
import { LEGACY_MODEL_FOLDERS } from './model-lists.ts';
import type { PromptExecutor } from './prompt-executor.ts';
import type { PromptQueue } from './prompt-queue.ts';

/**
 * The fake's HTTP routes, as server.py answers them (each also under `/api/`): the same paths,
 * status codes and body shapes, JSON as `application/json; charset=utf-8`, empty 200s for the
 * POSTs that answer nothing, aiohttp's texts for 404, 405 and a handler that raised.
 */

export interface FakeCounts {
  promptsReceived: number;
  promptsQueued: number;
  interrupts: number;
  queueDeletes: number;
  uploads: number;
  views: number;
  historyReads: number;
}

export interface RouteState {
  readonly queue: PromptQueue;
  readonly executor: PromptExecutor;
  readonly files: FileStore;
  readonly counts: FakeCounts;
  objectInfo(): ObjectInfo;
  readonly models: Readonly<Record<string, readonly string[]>>;
  readonly folders: readonly string[];
  readonly systemStats: unknown;
  readonly features: unknown;
  /** Set by the fault switch: every prompt is answered 400 with this body. */
  refusal: unknown;
  /** server.py's `self.number`: the next prompt's priority. */
  number: number;
}

interface Request {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly body: Buffer;
  readonly headers: IncomingMessage['headers'];
}

type Reply = {
  status: number;
  json?: unknown;
  text?: string;
  bytes?: Buffer;
  headers?: Record<string, string>;
};
type Handler = (state: RouteState, request: Request) => Reply | Promise<Reply>;

const ok = (json: unknown): Reply => ({ status: 200, json });
const empty = (status = 200): Reply => ({ status });
const raised: Reply = { status: 500, text: SERVER_ERROR_TEXT };

/** A JSON body as `await request.json()` reads it; undefined when it is not JSON (the handler raises). */
function jsonBody(request: Request): unknown {
  try {
    return JSON.parse(request.body.toString('utf8'));
  } catch {
    return undefined;
  }
}

const isDict = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const ROUTES: Readonly<Record<string, Readonly<Record<string, Handler>>>> = {
  '/embeddings': {
    GET: (state) => ok((state.models['embeddings'] ?? []).map((file) => file.replace(/\.[^.]*$/, ''))),
  },
  '/models': { GET: (state) => ok(state.folders) },
  '/extensions': { GET: () => ok([]) },
  '/system_stats': { GET: (state) => ok(state.systemStats) },
  '/features': { GET: (state) => ok(state.features) },
  '/object_info': { GET: (state) => ok(state.objectInfo()) },
  '/prompt': {
    GET: (state) => ok({ exec_info: { queue_remaining: state.queue.remaining } }),
    POST: postPrompt,
  },
  '/queue': {
    GET: (state) => ok(state.queue.snapshot()),
    POST: (state, request) => {
      const body = jsonBody(request);
      if (!isDict(body)) return raised;
      if (body['clear']) state.queue.wipe();
      for (const id of Array.isArray(body['delete']) ? body['delete'] : []) {
        if (state.queue.delete(String(id))) state.counts.queueDeletes += 1;
      }
      return empty();
    },
  },
  '/interrupt': {
    POST: (state, request) => {
      const body = jsonBody(request);
      const promptId = isDict(body) ? body['prompt_id'] : undefined;
      // A targeted interrupt stops only that prompt, and only while it runs.
      if (promptId && state.queue.running?.promptId !== promptId) return empty();
      if (state.queue.running) state.counts.interrupts += 1;
      state.executor.interrupt();
      return empty();
    },
  },
  '/free': {
    POST: (state, request) => {
      const body = jsonBody(request);
      if (!isDict(body)) return raised;
      // server.py sets the prompt queue's flags; the prompt worker acts on them at once when idle.
      state.executor.free({
        unloadModels: Boolean(body['unload_models']),
        freeMemory: Boolean(body['free_memory']),
      });
      return empty();
    },
  },
  '/history': {
    GET: (state, request) => {
      state.counts.historyReads += 1;
      const maxItems = request.query.get('max_items');
      const offset = request.query.get('offset');
      return ok(
        state.queue.entries(
          maxItems === null ? undefined : Number(maxItems),
          offset === null ? -1 : Number(offset),
        ),
      );
    },
    POST: (state, request) => {
      const body = jsonBody(request);
      if (!isDict(body)) return raised;
      if (body['clear']) state.queue.clearHistory();
      for (const id of Array.isArray(body['delete']) ? body['delete'] : [])
        state.queue.deleteHistory(String(id));
      return empty();
    },
  },
  '/upload/image': { POST: uploadImage },
  '/view': { GET: view },
};

/** Routes with a path parameter. */
const PARAM_ROUTES: readonly [RegExp, string, (state: RouteState, param: string) => Reply][] = [
  [
    /^\/models\/([^/]+)$/,
    'GET',
    (state, folder) => (state.folders.includes(folder) ? ok(listedFiles(state.models, folder)) : empty(404)),
  ],
  [
    /^\/object_info\/([^/]+)$/,
    'GET',
    (state, name) => {
      const definition = state.objectInfo()[name];
      return ok(definition ? { [name]: definition } : {});
    },
  ],
  [
    /^\/history\/([^/]+)$/,
    'GET',
    (state, id) => {
      state.counts.historyReads += 1;
      const entry = state.queue.entry(id);
      return ok(entry ? { [id]: entry } : {});
    },
  ],
];

function postPrompt(state: RouteState, request: Request): Reply {
  state.counts.promptsReceived += 1;
  const body = jsonBody(request);
  if (!isDict(body)) return raised;
  let number: number;
  if ('number' in body) number = Number(body['number']);
  else {
    number = body['front'] ? -state.number : state.number;
    state.number += 1;
  }
  if (state.refusal !== undefined && 'prompt' in body) return { status: 400, json: state.refusal };
  const validation = validatePrompt(state.objectInfo(), body, {
    fileExists: (name, folder) => state.files.exists(folder, name),
  });
  if (validation.status === 500) return raised;
  if (validation.status === 400) return { status: 400, json: validation.body };
  const promptId = String(body['prompt_id'] ?? randomUUID());
  const extraData: Record<string, unknown> = isDict(body['extra_data']) ? { ...body['extra_data'] } : {};
  if ('client_id' in body) extraData['client_id'] = body['client_id'];
  state.queue.put({ number, promptId, prompt: validation.prompt, extraData, outputs: validation.outputs });
  state.counts.promptsQueued += 1;
  state.executor.pump();
  return ok({ prompt_id: promptId, number, node_errors: validation.nodeErrors });
}

async function uploadImage(state: RouteState, request: Request): Promise<Reply> {
  let form: FormData;
  try {
    form = await new globalThis.Request('http://fake/upload', {
      method: 'POST',
      headers: { 'content-type': request.headers['content-type'] ?? '' },
      body: new Uint8Array(request.body),
    }).formData();
  } catch {
    return raised;
  }
  const image = form.get('image');
  if (!(image instanceof File) || !image.name) return empty(400);
  const type = String(form.get('type') ?? 'input');
  if (!['input', 'temp', 'output'].includes(type)) return raised;
  const subfolder = String(form.get('subfolder') ?? '');
  if (path.normalize(`x/${subfolder}/${image.name}`).split('/')[0] !== 'x') return empty(400);
  const overwrite = form.get('overwrite');
  const name = await state.files.upload(
    type as 'input',
    subfolder,
    image.name,
    Buffer.from(await image.arrayBuffer()),
    overwrite === 'true' || overwrite === '1',
  );
  state.counts.uploads += 1;
  return ok({ name, subfolder, type });
}

async function view(state: RouteState, request: Request): Promise<Reply> {
  const filename = request.query.get('filename');
  if (filename === null) return empty(404);
  if (!filename || filename.startsWith('/') || filename.includes('..')) return empty(400);
  const type = request.query.get('type') ?? 'output';
  if (!['input', 'temp', 'output'].includes(type)) return empty(400);
  const subfolder = request.query.get('subfolder') ?? '';
  if (path.normalize(`x/${subfolder}`).split('/')[0] !== 'x') return empty(403);
  const bytes = await state.files.read(
    type as 'output',
    path.normalize(subfolder).replace(/^\.$/, ''),
    filename,
  );
  if (!bytes) return empty(404);
  state.counts.views += 1;
  return {
    status: 200,
    bytes,
    headers: {
      'Content-Disposition': `filename="${filename}"`,
      'Content-Type': contentTypeOf(filename),
    },
  };
}

/**
 * What `/view` says a file is: Python's `mimetypes.guess_type` of its name for the files ComfyUI
 * saves, `application/octet-stream` when it knows none (a `.safetensors` LoRA).
 */
function contentTypeOf(filename: string): string {
  const extension = /\.([^.]*)$/.exec(filename)?.[1]?.toLowerCase();
  const known: Record<string, string> = {
    png: 'image/png',
    jpg: 'image/jpeg',
    jpeg: 'image/jpeg',
    webp: 'image/webp',
  };
  return (extension && known[extension]) || 'application/octet-stream';
}

/** Answers one request (the `/api/` prefix is the same routes). */
export async function answer(
  state: RouteState,
  incoming: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const url = new URL(incoming.url ?? '/', 'http://fake');
  const chunks: Buffer[] = [];
  for await (const chunk of incoming) chunks.push(chunk as Buffer);
  // While the prompt worker collects garbage the whole process waits (Python's lock).
  while (state.executor.held) await state.executor.held;
  const request: Request = {
    method: incoming.method ?? 'GET',
    path: url.pathname.replace(/^\/api(?=\/)/, ''),
    query: url.searchParams,
    body: Buffer.concat(chunks),
    headers: incoming.headers,
  };
  const reply = await route(state, request);
  const headers: Record<string, string> = { ...reply.headers };
  let payload: Buffer;
  if (reply.json !== undefined) {
    payload = Buffer.from(JSON.stringify(reply.json));
    headers['Content-Type'] = 'application/json; charset=utf-8';
  } else if (reply.text !== undefined) {
    payload = Buffer.from(reply.text);
    headers['Content-Type'] = 'text/plain; charset=utf-8';
  } else payload = reply.bytes ?? Buffer.alloc(0);
  headers['Content-Length'] = String(payload.length);
  response.writeHead(reply.status, headers).end(payload);
}

function route(state: RouteState, request: Request): Reply | Promise<Reply> {
  const methods = ROUTES[request.path];
  if (methods) {
    const handler = methods[request.method];
    return handler ? handler(state, request) : { status: 405, text: '405: Method Not Allowed' };
  }
  for (const [pattern, method, handler] of PARAM_ROUTES) {
    const match = pattern.exec(request.path);
    if (!match) continue;
    if (request.method !== method) return { status: 405, text: '405: Method Not Allowed' };
    return handler(state, decodeURIComponent(match[1]!));
  }
  return { status: 404, text: '404: Not Found' };
}

/** `GET /models/<folder>`: the folder's files, and those of the legacy names that stand for it. */
function listedFiles(models: RouteState['models'], folder: string): string[] {
  const legacy = Object.keys(LEGACY_MODEL_FOLDERS).filter((name) => LEGACY_MODEL_FOLDERS[name] === folder);
  return [...new Set([folder, ...legacy].flatMap((name) => models[name] ?? []))];
}
