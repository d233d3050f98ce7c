import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type FakeComfyUI, startFakeComfyUI } from '../src/fake-comfyui/index.ts';

/**
 * The fake against the recordings of a real ComfyUI 0.3.64: every recorded HTTP exchange is
 * replayed against the fake, in the order and server sessions it was recorded in, and must get the
 * same status, the headers that matter and a body of the same shape; every recorded WebSocket
 * transcript must come out of the fake in the same order.
 */

const CAPTURES = path.resolve(import.meta.dirname, '../comfyui-captures');
const read = (file: string) => readFileSync(path.join(CAPTURES, file));

interface Exchange {
  request: { method: string; path: string; headers: Record<string, string>; body: unknown };
  response: {
    status: number;
    headers: Record<string, string>;
    body: unknown;
    body_binary?: { saved_as: string };
  };
}

const exchanges = readdirSync(CAPTURES)
  .filter((file) => /^[a-z0-9]+-\d\d-.*\.json$/.test(file))
  .sort();

/** The recorded server sessions (prompt numbers restart at 0 in each), in recording order. */
const SESSIONS: readonly { scenarios: readonly string[]; previews?: boolean }[] = [
  { scenarios: ['txt2img'] },
  { scenarios: ['img2img'] },
  { scenarios: ['info', 'errors', 'interrupt', 't2i512', 'history'] },
  { scenarios: ['previews'], previews: true },
];

/** Which transcript records the socket of which prompt (by the recorded POST). */
const TRANSCRIPTS: Readonly<Record<string, string>> = {
  'txt2img-01-post-prompt-txt2img-64.json': 'ws-transcript-txt2img.jsonl',
  'txt2img-07-post-prompt-txt2img-64-identical.json': 'ws-transcript-txt2img-cached.jsonl',
  'img2img-06-post-prompt-img2img.json': 'ws-transcript-img2img.jsonl',
  'errors-14-post-prompt-runtime-error.json': 'ws-transcript-runtime-error.jsonl',
  'interrupt-01-post-prompt-long-A.json': 'ws-transcript-interrupt.jsonl',
  't2i512-01-post-prompt-txt2img-512.json': 'ws-transcript-txt2img-512.jsonl',
  'previews-01-post-prompt-txt2img-previews.json': 'ws-transcript-previews-metadata.jsonl',
  'previews-02-post-prompt-txt2img-previews-legacy.json': 'ws-transcript-previews-legacy.jsonl',
};

/**
 * Transcripts recorded by a script of their own, not in the sessions above, each held to the fake
 * by its own test: the real out-of-memory (`record-out-of-memory.ts`, out-of-memory-capture.test.ts).
 */
const RECORDED_APART = new Set(['ws-transcript-oom.jsonl']);

/** Prompts the recording sent while another one ran (all others were sent to an idle server). */
const SENT_WHILE_BUSY = new Set([
  'interrupt-02-post-prompt-pending-B.json',
  'interrupt-03-post-prompt-pending-C.json',
]);

/** The recorded runtime error: an SD3 latent decoded by the SD1.5 VAE. The fake is told to fail there. */
const RUNTIME_ERROR = {
  node: '8',
  exceptionType: 'RuntimeError',
  message:
    'Given groups=1, weight of size [4, 4, 1, 1], expected input[1, 16, 8, 8] to have 4 channels, but got 16 channels instead',
};

/** The structure of a JSON value: keys and value types; a list of plain values counts as one type. */
function shape(value: unknown): unknown {
  if (Array.isArray(value)) {
    if (value.every((item) => item === null || typeof item !== 'object')) return 'list of values';
    return value.map(shape);
  }
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, shape((value as Record<string, unknown>)[key])]),
    );
  }
  return value === null ? 'null' : typeof value;
}

/** A recorded message reduced to what its order and content depend on. */
function summary(message: { type: string; data: Record<string, unknown> } | { binary: number }): string {
  if ('binary' in message) return `binary ${message.binary}`;
  const { type, data } = message;
  if (type === 'status') return `status ${'sid' in data ? 'greeting' : ''}`;
  if (type === 'progress_state') {
    const nodes = data['nodes'] as Record<string, { state: string; value: number; max: number }>;
    const states = Object.entries(nodes)
      .sort(([a], [b]) => Number(a) - Number(b))
      .map(([id, node]) => `${id}:${node.state}:${node.value}/${node.max}`);
    return `progress_state ${states.join(' ')}`;
  }
  if (type === 'execution_cached')
    return `execution_cached ${[...(data['nodes'] as string[])].sort().join(',')}`;
  if (type === 'progress') return `progress ${data['node']} ${data['value']}/${data['max']}`;
  if (type === 'executed') {
    // File names carry the output folder's counter, which the recorded server had advanced before.
    const images = (data['output'] as { images: { type: string }[] }).images;
    return `executed ${data['node']} ${images.map((image) => image.type).join(',')}`;
  }
  if (type === 'executing') return `executing ${data['node']}`;
  return `${type} ${String(data['node_id'] ?? '')} ${Object.keys(data).sort().join(',')}`;
}

function recordedTranscript(file: string): string[] {
  return read(file)
    .toString('utf8')
    .split('\n')
    .filter(Boolean)
    .map(
      (line) =>
        JSON.parse(line) as {
          text?: { type: string; data: Record<string, unknown> };
          binary?: { event_type: number };
        },
    )
    .filter((entry) => entry.text || entry.binary)
    .map((entry) => summary(entry.text ?? { binary: entry.binary!.event_type }));
}

class Listener {
  readonly messages: string[] = [];
  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data, isBinary) => {
      const buffer = data as Buffer;
      this.messages.push(
        summary(isBinary ? { binary: buffer.readUInt32BE(0) } : JSON.parse(buffer.toString('utf8'))),
      );
    });
  }

  static async open(fake: FakeComfyUI, clientId: string, featureFlags: boolean): Promise<Listener> {
    const ws = new WebSocket(`${fake.url.replace('http', 'ws')}/ws?clientId=${clientId}`);
    const listener = new Listener(ws);
    await new Promise((resolve) => ws.once('open', resolve));
    if (featureFlags)
      ws.send(JSON.stringify({ type: 'feature_flags', data: { supports_preview_metadata: true } }));
    return listener;
  }

  /** Closes once `executing {node: null}` for the last prompt arrived. */
  async close(endings: number): Promise<string[]> {
    await until(() => this.messages.filter((m) => m.startsWith('executing null')).length >= endings);
    this.ws.close();
    return this.messages;
  }
}

async function until(done: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const start = Date.now();
  while (!(await done())) {
    if (Date.now() - start > timeoutMs) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** The recorded request, with the recorded prompt ids replaced by the fake's. */
async function send(fake: FakeComfyUI, exchange: Exchange, ids: Map<string, string>) {
  const swap = (text: string) =>
    [...ids].reduce((out, [recorded, ours]) => out.replaceAll(recorded, ours), text);
  const { method, headers, body } = exchange.request;
  const init: RequestInit = { method };
  const multipart = (
    body as {
      multipart?: {
        fields: Record<string, string>;
        files: Record<string, { filename: string; content_type: string; length: number }>;
      };
    } | null
  )?.multipart;
  if (multipart) {
    const form = new FormData();
    for (const [name, value] of Object.entries(multipart.fields)) form.append(name, value);
    for (const [name, file] of Object.entries(multipart.files)) {
      // The recorded upload is the gradient the server later showed (/view); another length is other content.
      const gradient = read('img2img-05-get-view-input.response.png');
      const bytes =
        file.length === gradient.length
          ? gradient
          : await sharp({ create: { width: 40, height: 30, channels: 3, background: '#808' } })
              .png()
              .toBuffer();
      form.append(name, new Blob([new Uint8Array(bytes)], { type: file.content_type }), file.filename);
    }
    init.body = form;
  } else if (body !== null && body !== undefined) {
    init.headers = headers;
    init.body = typeof body === 'string' ? body : swap(JSON.stringify(body));
  }
  const response = await fetch(`${fake.url}${swap(exchange.request.path)}`, init);
  const bytes = Buffer.from(await response.arrayBuffer());
  return { status: response.status, headers: response.headers, bytes };
}

describe('the fake ComfyUI replays the recorded exchanges', () => {
  it('replays every recorded exchange and transcript', () => {
    const replayed = SESSIONS.flatMap(({ scenarios }) =>
      exchanges.filter((file) => scenarios.some((scenario) => file.startsWith(`${scenario}-`))),
    );
    expect(replayed.sort()).toEqual(exchanges);
    const transcripts = readdirSync(CAPTURES).filter(
      (file) => file.startsWith('ws-transcript-') && !RECORDED_APART.has(file),
    );
    expect(Object.values(TRANSCRIPTS).sort()).toEqual(transcripts.sort());
  });

  let fake: FakeComfyUI | undefined;
  afterEach(async () => {
    await fake?.close();
    fake = undefined;
  });

  for (const session of SESSIONS) {
    it(`session: ${session.scenarios.join(', ')}`, async () => {
      fake = await startFakeComfyUI({ stepDelayMs: 20, previews: session.previews ?? false });
      const started = fake;
      const ids = new Map<string, string>();
      const transcripts: { file: string; listener: Listener; endings: number; messages?: string[] }[] = [];
      const files = session.scenarios.flatMap((scenario) =>
        exchanges.filter((file) => file.startsWith(`${scenario}-`)),
      );
      expect(files.length).toBeGreaterThan(0);

      for (const file of files) {
        const exchange = JSON.parse(read(file).toString('utf8')) as Exchange;
        const { request, response: recorded } = exchange;
        const isPrompt = request.method === 'POST' && request.path === '/prompt';
        if (isPrompt && !SENT_WHILE_BUSY.has(file)) {
          await until(() => idle(started));
          // The recording's socket was open for its prompt only.
          for (const open of transcripts) open.messages ??= await open.listener.close(open.endings);
        }
        const transcript = TRANSCRIPTS[file];
        if (transcript) {
          const clientId = (request.body as { client_id: string }).client_id;
          const listener = await Listener.open(started, clientId, transcript.includes('metadata'));
          transcripts.push({ file: transcript, listener, endings: transcript.includes('interrupt') ? 2 : 1 });
        }
        if (file.startsWith('errors-14')) started.faults.failNode(RUNTIME_ERROR);
        // The recorded long prompt was interrupted during its third step.
        if (file.startsWith('interrupt-01')) started.faults.afterStep(2, 'stall');
        // The recording read history after the prompt had ended.
        const historyOf = /^\/history\/(.+)$/.exec(request.path)?.[1];
        if (historyOf && Object.keys(recorded.body as object).length > 0) {
          await until(() =>
            started.executions.some((run) => run.promptId === ids.get(historyOf) && run.endedAt),
          );
        }
        if (request.path.startsWith('/history?')) await until(() => idle(started));
        if (file.startsWith('interrupt-07')) {
          await until(() => transcripts.at(-1)!.listener.messages.includes('progress 3 2/30'));
        }

        const answer = await send(started, exchange, ids);
        expect(answer.status, file).toBe(recorded.status);
        for (const header of ['Content-Type', 'Content-Disposition']) {
          expect(answer.headers.get(header) ?? undefined, `${file} ${header}`).toBe(recorded.headers[header]);
        }
        if (recorded.body_binary) {
          // An image: the same size as the recorded one (the graph's size, or the uploaded file).
          const expected = await sharp(read(recorded.body_binary.saved_as)).metadata();
          const actual = await sharp(answer.bytes).metadata();
          expect([actual.width, actual.height], file).toEqual([expected.width, expected.height]);
        } else if (recorded.body === null) {
          expect(answer.bytes.length, file).toBe(0);
        } else if (typeof recorded.body === 'string') {
          expect(answer.bytes.toString('utf8'), file).toBe(recorded.body);
        } else {
          const body = JSON.parse(answer.bytes.toString('utf8')) as Record<string, unknown>;
          if (isPrompt && recorded.status === 200)
            ids.set((recorded.body as { prompt_id: string }).prompt_id, String(body['prompt_id']));
          const recordedBody = JSON.parse(
            [...ids].reduce((out, [a, b]) => out.replaceAll(a, b), JSON.stringify(recorded.body)),
          );
          expect(shape(body), file).toEqual(shape(recordedBody));
          if (file.startsWith('info-') || /^img2img-0[1-3]/.test(file) || recorded.status === 400) {
            if (!file.startsWith('info-01')) expect(body, file).toEqual(recordedBody);
          }
        }
        if (file.startsWith('errors-14')) {
          await until(() => idle(started));
          started.faults.failNode(undefined);
        }
      }

      for (const open of transcripts) open.messages ??= await open.listener.close(open.endings);
      for (const { file, messages = [] } of transcripts) {
        const expected = recordedTranscript(file);
        expect(expected.length, file).toBeGreaterThan(5);
        // The recording of the cached prompt is a slice of a socket opened earlier: no greeting.
        const actual = expected[0] === 'status greeting' ? messages : messages.slice(1);
        if (file.includes('interrupt')) {
          // Status messages there follow the recording's own timing (prompts sent mid-run).
          const noStatus = (messages: string[]) => messages.filter((m) => !m.startsWith('status'));
          expect(noStatus(actual), file).toEqual(noStatus(expected));
        } else {
          expect(actual, file).toEqual(expected);
        }
      }
    });
  }
});

/** Nothing queued or running (GET /prompt). */
async function idle(fake: FakeComfyUI): Promise<boolean> {
  const answer = (await (await fetch(`${fake.url}/prompt`)).json()) as {
    exec_info: { queue_remaining: number };
  };
  return answer.exec_info.queue_remaining === 0;
}
