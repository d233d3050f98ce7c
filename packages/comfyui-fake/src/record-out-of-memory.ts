/**
 * Records a real ComfyUI running out of memory, for the fake and the client to be held to:
 *
 *   npx tsx packages/comfyui-fake/src/record-out-of-memory.ts http://127.0.0.1:8188 [CHECKPOINT]
 *
 * It sends the recorded txt2img graph with an empty latent of 4096 x 4 x 2048 x 2048 floats
 * (16384 x 16384 pixels, batch 4096: 256 GiB), which no machine here can allocate: on a CPU server
 * PyTorch's allocator refuses it at once (Linux refuses an allocation larger than memory and swap
 * together), so nothing is touched and the server stays well; on a GPU the CUDA allocator refuses
 * it. It writes the exchange, the socket's messages and the history entry into comfyui-captures/
 * (`oom-post-prompt.json`, `ws-transcript-oom.jsonl`, `oom-get-history.json`), then frees the
 * server (`POST /free`) and runs a small prompt to show it works again.
 */
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import WebSocket from 'ws';
import { readCapture } from './fake-comfyui/captures.ts';

const CAPTURES = path.resolve(import.meta.dirname, '../comfyui-captures');
const [url, checkpoint = 'random-sd15.safetensors'] = process.argv.slice(2);
if (!url) {
  console.error('usage: record-out-of-memory.ts http://HOST:PORT [CHECKPOINT]');
  process.exit(2);
}
const base = url.replace(/\/+$/, '');

type Graph = Record<string, { class_type: string; inputs: Record<string, unknown> }>;
const recorded = readCapture<{ request: { body: { prompt: Graph } } }>(
  'txt2img-01-post-prompt-txt2img-64.json',
).request.body.prompt;

function graph(width: number, height: number, batch: number): Graph {
  const prompt = structuredClone(recorded);
  for (const node of Object.values(prompt)) {
    if (node.class_type === 'CheckpointLoaderSimple') node.inputs.ckpt_name = checkpoint;
    if (node.class_type === 'EmptyLatentImage') node.inputs = { width, height, batch_size: batch };
    if (node.class_type === 'SaveImage') node.inputs.filename_prefix = 'imagegen-record/oom';
    if (node.class_type === 'KSampler') node.inputs.steps = 1;
  }
  return prompt;
}

async function exchange(method: string, route: string, body?: unknown) {
  const started = performance.now();
  const response = await fetch(`${base}${route}`, {
    method,
    ...(body === undefined
      ? {}
      : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return {
    request: { method, path: route, headers: {}, body: body ?? null },
    response: {
      status: response.status,
      headers: { 'Content-Type': response.headers.get('content-type') ?? '' },
      body: parsed,
    },
    elapsed_s: Math.round((performance.now() - started) / 10) / 100,
  };
}

/** Runs one prompt with its socket recorded; answers the POST exchange and every message. */
async function run(prompt: Graph) {
  const clientId = randomUUID();
  const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/ws?clientId=${clientId}`);
  const opened = performance.now();
  const transcript: string[] = [];
  const promptId = randomUUID();
  const ended = new Promise<void>((resolve) => {
    ws.on('message', (data, isBinary) => {
      const t = Math.round(performance.now() - opened) / 1000;
      if (isBinary) {
        transcript.push(JSON.stringify({ t, binary: { event_type: (data as Buffer).readUInt32BE(0) } }));
        return;
      }
      const message = JSON.parse(data.toString()) as {
        type: string;
        data: { node?: unknown; prompt_id?: string };
      };
      transcript.push(JSON.stringify({ t, text: message }));
      if (message.type === 'executing' && message.data.node === null && message.data.prompt_id === promptId)
        resolve();
    });
  });
  await new Promise((resolve) => ws.once('open', resolve));
  const post = await exchange('POST', '/prompt', { prompt, client_id: clientId, prompt_id: promptId });
  if (post.response.status !== 200)
    throw new Error(`the server refused the prompt: ${JSON.stringify(post.response.body)}`);
  await ended;
  ws.close();
  return { promptId, post, transcript };
}

const oom = await run(graph(16384, 16384, 4096));
const history = await exchange('GET', `/history/${oom.promptId}`);
const entry = (
  history.response.body as Record<string, { status: { messages: [string, Record<string, unknown>][] } }>
)[oom.promptId];
const failure = entry?.status.messages.find(([event]) => event === 'execution_error')?.[1];
if (!failure) throw new Error(`the prompt did not fail: ${JSON.stringify(entry?.status)}`);
await writeFile(path.join(CAPTURES, 'oom-post-prompt.json'), `${JSON.stringify(oom.post, null, 1)}\n`);
await writeFile(path.join(CAPTURES, 'ws-transcript-oom.jsonl'), `${oom.transcript.join('\n')}\n`);
await writeFile(path.join(CAPTURES, 'oom-get-history.json'), `${JSON.stringify(history, null, 1)}\n`);
console.log(
  `recorded: ${failure.node_type} (node ${failure.node_id}) ${failure.exception_type}: ${String(failure.exception_message).split('\n')[0]}`,
);

const free = await exchange('POST', '/free', { unload_models: true, free_memory: true });
const after = await run(graph(64, 64, 1));
const afterEntry = (await exchange('GET', `/history/${after.promptId}`)).response.body as Record<
  string,
  { status: { status_str: string } }
>;
console.log(
  `POST /free answered ${free.response.status}; a 64 x 64 prompt then ended ${afterEntry[after.promptId]?.status.status_str}`,
);
