/**
 * Records the exchanges of the protocols the API speaks besides its own: OpenAI's Images API (the
 * models, a generation answered by link and one in base64, an edit of an uploaded photo, the errors
 * a client meets) and MCP over Streamable HTTP (initialize, the tool list, a tool call with its
 * progress notifications and its image). On the stage of the task recordings (record-exchanges.mts):
 * the engines `npm start` runs, the comfyui engine against the fake ComfyUI.
 *
 * A tool call is held where the task recordings hold their tasks (at the engine's door, then after
 * the first sampler step), so its notifications are the same on every run: `queued`, then the
 * progress at that step; the ones after it, as many as the worker's writes happen to make, are
 * left out, and the result follows.
 */
import type { Pool } from '@imagegen/db';
import { startLoopbackApi } from '@imagegen/server/testing';
import sharp from 'sharp';
import type {
  FormPart,
  ProtocolAnswer,
  ProtocolExchange,
  ProtocolRequest,
  ProtocolStep,
} from '../src/components/protocol-exchange.ts';
import { type Stage, startStage, until } from './record-exchanges.mts';

/** What the recordings write for the API's address, as the other recordings do. */
const PUBLIC_API = 'https://api.example.com';
/** The MCP protocol version the recorded client speaks. */
const MCP_VERSION = '2025-06-18';
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/** The protocol recordings, in the order the pages show them. */
export async function recordProtocols(pool: Pool): Promise<ProtocolExchange[]> {
  const stage = await startStage(pool);
  try {
    return [await recordOpenAi(stage), await recordOpenAiEdit(stage), await recordMcp(stage)];
  } finally {
    await stage.close();
  }
}

/** Records a step: the request as sent (the key as its placeholder), the answer normalised. */
type Send = (title: string, request: ProtocolRequest, sent?: RequestInit['body']) => Promise<ProtocolStep>;

function sender(baseUrl: string, key: string): Send {
  return async (title, request, sent) => {
    const headers = Object.fromEntries(
      Object.entries(request.headers)
        // A form's Content-Type is fetch's to write, with the form's boundary.
        .filter(([name]) => !(sent instanceof FormData && name === 'Content-Type'))
        .map(([name, value]) => [name, value.replace('<your key>', key)]),
    );
    const response = await fetch(`${baseUrl}${request.path}`, {
      method: request.method,
      headers,
      ...(sent !== undefined
        ? { body: sent }
        : request.body !== undefined
          ? { body: JSON.stringify(request.body) }
          : {}),
    });
    const type = response.headers.get('content-type') ?? '';
    const kept: Record<string, string> = { 'content-type': type };
    for (const name of ['retry-after', 'x-should-retry']) {
      const value = response.headers.get(name);
      if (value !== null) kept[name] = value;
    }
    const text = await response.text();
    if (type.startsWith('text/event-stream')) {
      return {
        title,
        request,
        answer: {
          status: response.status,
          headers: kept,
          events: (await normalised(baseUrl, events(text))) as unknown[],
        },
      };
    }
    const body = JSON.parse(text) as { data?: { url?: string }[] };
    const links = (body.data ?? []).flatMap((image) => (image.url ? [image.url] : []));
    const answer: ProtocolAnswer = {
      status: response.status,
      headers: kept,
      body: await normalised(baseUrl, body),
      ...(links.length > 0 ? { served: await Promise.all(links.map(servedImage)) } : {}),
    };
    return { title, request, answer };
  };
}

/** The `data` of each event of a stream, as JSON. */
function events(text: string): unknown[] {
  return text
    .split(/\n\n/)
    .map((block) =>
      block
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trimStart())
        .join('\n'),
    )
    .filter((data) => data !== '')
    .map((data) => JSON.parse(data) as unknown);
}

/**
 * The answer with what changes from run to run as placeholders: the API's address, task ids,
 * stored files' random folders, times, and image data (described by what it holds).
 */
async function normalised(baseUrl: string, value: unknown, key?: string): Promise<unknown> {
  if (typeof value === 'string') {
    if ((key === 'b64_json' || key === 'data') && value.length > 200) return describeImage(value);
    return value
      .replaceAll(baseUrl, PUBLIC_API)
      .replace(UUID, '<task-id>')
      .replace(/\/files\/[A-Za-z0-9_-]{22}\//g, '/files/<key>/');
  }
  if (typeof value === 'number' && key === 'created') return '<unix-time>';
  if (Array.isArray(value)) return Promise.all(value.map((item) => normalised(baseUrl, item)));
  if (value && typeof value === 'object') {
    const entries = await Promise.all(
      Object.entries(value).map(async ([k, v]) => [k, await normalised(baseUrl, v, k)] as const),
    );
    return Object.fromEntries(entries);
  }
  return value;
}

/** What a link served, as a client fetching it gets it: `PNG, 1216 × 832`. */
async function servedImage(url: string): Promise<string> {
  const { format, width, height } = await sharp(
    Buffer.from(await (await fetch(url)).arrayBuffer()),
  ).metadata();
  return `${(format ?? 'image').toUpperCase()}, ${width} × ${height}`;
}

async function describeImage(base64: string): Promise<string> {
  const { format, width, height } = await sharp(Buffer.from(base64, 'base64')).metadata();
  return `<base64 of a ${(format ?? 'image').toUpperCase()}, ${width} × ${height}>`;
}

const JSON_POST = { Authorization: 'Bearer <your key>', 'Content-Type': 'application/json' };

async function recordOpenAi(stage: Stage): Promise<ProtocolExchange> {
  const api = await startLoopbackApi({ pool: stage.pool, engines: stage.engines });
  try {
    const send = sender(api.url, stage.apiKey);
    return {
      name: 'openai-images',
      steps: [
        await send('The models a client may name', {
          method: 'GET',
          path: '/v1/models',
          headers: { Authorization: 'Bearer <your key>' },
        }),
        await send('A generation answered by link, at the size of the family nearest the one asked for', {
          method: 'POST',
          path: '/v1/images/generations',
          headers: JSON_POST,
          body: { model: 'sdxl', prompt: 'a lighthouse at dawn, oil painting', size: '1536x1024', n: 1 },
        }),
        await send("A GPT image name, answered as OpenAI's GPT image models answer: base64", {
          method: 'POST',
          path: '/v1/images/generations',
          headers: JSON_POST,
          body: {
            model: 'gpt-image-1',
            prompt: 'a red bicycle against a white wall',
            quality: 'low',
            size: '1024x1536',
          },
        }),
        await send('A model the table does not name', {
          method: 'POST',
          path: '/v1/images/generations',
          headers: JSON_POST,
          body: { model: 'midjourney', prompt: 'a lighthouse' },
        }),
        await send('More images than the model draws at once', {
          method: 'POST',
          path: '/v1/images/generations',
          headers: JSON_POST,
          body: { model: 'sd3.5', prompt: 'a lighthouse', n: 4 },
        }),
      ],
    };
  } finally {
    await api.close();
  }
}

async function recordOpenAiEdit(stage: Stage): Promise<ProtocolExchange> {
  const api = await startLoopbackApi({ pool: stage.pool, engines: stage.engines });
  try {
    const send = sender(api.url, stage.apiKey);
    const photo = await sharp({ create: { width: 640, height: 480, channels: 3, background: '#5a7d9a' } })
      .png()
      .toBuffer();
    const parts: FormPart[] = [
      { name: 'model', value: 'sdxl' },
      { name: 'prompt', value: 'the same street at night, lit by lanterns' },
      { name: 'image', file: 'street.png', type: 'image/png', size: '640 × 480' },
    ];
    const form = new FormData();
    for (const part of parts) {
      if ('value' in part) form.append(part.name, part.value);
      else form.append(part.name, new Blob([new Uint8Array(photo)], { type: part.type }), part.file);
    }
    return {
      name: 'openai-edits',
      steps: [
        await send(
          'An edit without a mask (image to image), the image sent as a file',
          {
            method: 'POST',
            path: '/v1/images/edits',
            headers: { Authorization: 'Bearer <your key>', 'Content-Type': 'multipart/form-data' },
            form: parts,
          },
          form,
        ),
      ].map((step) => ({
        ...step,
        // fetch writes the form's own Content-Type, with its boundary.
        request: {
          ...step.request,
          headers: { ...step.request.headers, 'Content-Type': 'multipart/form-data; boundary=…' },
        },
      })),
    };
  } finally {
    await api.close();
  }
}

const MCP_HEADERS = {
  Authorization: 'Bearer <your key>',
  'Content-Type': 'application/json',
  Accept: 'application/json, text/event-stream',
};

async function recordMcp(stage: Stage): Promise<ProtocolExchange> {
  // No worker until the call's task has queued: its first notification always says `queued`.
  const api = await startLoopbackApi({
    pool: stage.pool,
    engines: stage.engines,
    withWorker: false,
    worker: { progressFlushMs: 20 },
  });
  try {
    const send = sender(api.url, stage.apiKey);
    const versioned = { ...MCP_HEADERS, 'mcp-protocol-version': MCP_VERSION };
    const initialize = await send('Initialize (each POST stands alone: the server keeps no session)', {
      method: 'POST',
      path: '/mcp',
      headers: MCP_HEADERS,
      body: {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: MCP_VERSION,
          capabilities: {},
          clientInfo: { name: 'my-agent', version: '1.0.0' },
        },
      },
    });
    const list = await send('The tools', {
      method: 'POST',
      path: '/mcp',
      headers: versioned,
      body: { jsonrpc: '2.0', id: 2, method: 'tools/list' },
    });
    const call = await recordToolCall(stage, api, stage.apiKey, versioned);
    return { name: 'mcp', steps: [initialize, shortList(list), call] };
  } finally {
    await api.close();
  }
}

/** The tool list with its first tool in full and the others by name: 30 input schemas say little more. */
function shortList(step: ProtocolStep): ProtocolStep {
  const events = (step.answer.events ?? []).map((event) => {
    const tools = (event as { result?: { tools?: { name: string }[] } }).result?.tools;
    if (!tools) return event;
    const [first, ...rest] = tools;
    return {
      ...(event as object),
      result: { tools: [first, `<${rest.length} more: ${rest.map((tool) => tool.name).join(', ')}>`] },
    };
  });
  return { ...step, answer: { ...step.answer, events } };
}

async function recordToolCall(
  stage: Stage,
  api: Awaited<ReturnType<typeof startLoopbackApi>>,
  key: string,
  headers: Record<string, string>,
): Promise<ProtocolStep> {
  const door = stage.engines.arm();
  for (const fake of stage.fakes) fake.faults.afterStep(1, 'stall');
  const request: ProtocolRequest = {
    method: 'POST',
    path: '/mcp',
    headers,
    body: {
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: {
        name: 'sd_text2image_v1',
        arguments: { prompt: 'a lighthouse at dawn', negative_prompt: 'blurry', width: 512, height: 512 },
        _meta: { progressToken: 'call-3' },
      },
    },
  };
  const response = await fetch(`${api.url}/mcp`, {
    method: 'POST',
    headers: Object.fromEntries(
      Object.entries(headers).map(([name, value]) => [name, value.replace('<your key>', key)]),
    ),
    body: JSON.stringify(request.body),
  });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const received: unknown[] = [];
  /** Reads the stream until `enough` holds of the events so far (or it ends). */
  const readUntil = async (enough: () => boolean) => {
    while (!enough()) {
      const { value, done } = await reader.read();
      if (done) return;
      text += decoder.decode(value, { stream: true });
      const cut = text.lastIndexOf('\n\n');
      if (cut === -1) continue;
      received.push(...events(text.slice(0, cut + 2)));
      text = text.slice(cut + 2);
    }
  };
  const notifications = () =>
    received.filter((event) => (event as { method?: string }).method === 'notifications/progress');
  // Queued with no worker: the first notification says so. Then a worker takes the task to the
  // engine's door, and the fake holds it after its first step: the second one tells that step.
  await readUntil(() => notifications().length === 1);
  api.addWorker();
  await until('the tool call to reach the engine', async () => (door.reached ? true : undefined));
  door.open();
  await readUntil(() => notifications().length === 2);
  const kept = notifications().slice();
  for (const fake of stage.fakes) fake.faults.resume();
  await readUntil(() => received.some((event) => 'result' in (event as object)));
  const result = received.filter((event) => 'result' in (event as object));
  return {
    title: 'A tool call: its progress notifications, then its result',
    request,
    answer: {
      status: response.status,
      headers: { 'content-type': response.headers.get('content-type') ?? '' },
      events: (await normalised(api.url, [...kept, ...result])) as unknown[],
    },
  };
}
