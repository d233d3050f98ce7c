import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sandboxEngineModule } from '@imagegen/engine-sandbox';
import { createEngineRegistry, type Engine, type EngineJob, setUpEngines } from '@imagegen/engines';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOwner } from '../../src/auth/accounts.ts';
import {
  createPromptEnhancer,
  ENHANCER_INSTRUCTION,
  MAX_ENHANCED_CHARS,
  NO_ENHANCER_NOTE,
  promptEnhancerFromEnv,
  rewrittenPrompt,
} from '../../src/tasks/prompt-enhancer.ts';
import { apiCalls } from '../support/api-calls.ts';
import { png } from '../support/fakes.ts';
import { type LoopbackApi, startLoopbackApi } from '../support/loopback.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';

/**
 * `enhance_prompt`: the prompt rewritten by the operator's language model, asked as OpenAI's chat
 * completions API is asked, here of a stand-in that speaks that API on loopback (as Ollama,
 * LocalAI or vLLM answer it). Whatever the model does (answers, fails, says nothing, takes too
 * long), the task runs, and its status's notes say what became of the prompt.
 */

/** What the stand-in received, and how it answers the next requests. */
interface ChatRequest {
  readonly path: string;
  readonly authorization: string | undefined;
  readonly body: {
    model: string;
    messages: { role: string; content: string }[];
    stream: boolean;
    max_tokens: number;
  };
}

type Answer = (request: ChatRequest, res: ServerResponse) => void;

const received: ChatRequest[] = [];
let answer: Answer;
let chat: Server;
let chatUrl: string;

/** A chat completion whose first choice says `content`, as the API answers one. */
function completion(content: unknown) {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    model: 'stand-in',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
  };
}

const answerWith =
  (content: unknown): Answer =>
  (_request, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(completion(content)));
  };

beforeAll(async () => {
  chat = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = {
        path: req.url ?? '',
        authorization: req.headers.authorization,
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
      };
      received.push(request);
      answer(request, res);
    });
  });
  await new Promise<void>((resolve) => chat.listen(0, '127.0.0.1', resolve));
  chatUrl = `http://127.0.0.1:${(chat.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  chat.closeAllConnections();
  await new Promise((resolve) => chat.close(resolve));
});

const enhancer = (settings: { key?: string; timeoutMs?: number } = {}) =>
  createPromptEnhancer({ url: chatUrl, model: 'llama3.2', timeoutMs: 10_000, ...settings });
const never = new AbortController().signal;

describe('the prompt enhancer', () => {
  it('asks the chat completions API with the documented instruction and answers the rewritten prompt', async () => {
    answer = answerWith('  "A lighthouse at dawn, warm light over calm sea, wide shot"  ');
    received.length = 0;
    const out = await enhancer({ key: 'sk-local' }).enhance('a lighthouse', never);
    expect(out).toEqual({
      prompt: 'A lighthouse at dawn, warm light over calm sea, wide shot',
      note: 'enhance_prompt: the prompt was rewritten by llama3.2 before generating: "A lighthouse at dawn, warm light over calm sea, wide shot"',
    });
    expect(received).toHaveLength(1);
    const [request] = received;
    expect(request?.path).toBe('/v1/chat/completions');
    expect(request?.authorization).toBe('Bearer sk-local');
    expect(request?.body).toMatchObject({
      model: 'llama3.2',
      stream: false,
      max_tokens: 300,
      messages: [
        { role: 'system', content: ENHANCER_INSTRUCTION },
        { role: 'user', content: 'a lighthouse' },
      ],
    });
  });

  it("drops a reasoning model's thinking, and cuts a long answer at a word", async () => {
    expect(rewrittenPrompt(completion('<think>the user wants\na boat</think>\nA red boat on a lake'))).toBe(
      'A red boat on a lake',
    );
    const long = rewrittenPrompt(completion(`${'word '.repeat(400)}end`));
    expect(long.length).toBeLessThanOrEqual(MAX_ENHANCED_CHARS);
    expect(long.endsWith('word')).toBe(true);
    expect(rewrittenPrompt({ choices: [] })).toBe('');
    expect(rewrittenPrompt('not an answer')).toBe('');
  });

  it('uses the prompt as given, saying why, when the model fails, says nothing, answers garbage or too much', async () => {
    const cases: [Answer, string][] = [
      [
        (_r, res) => {
          res.writeHead(500);
          res.end('{"error":"model not found"}');
        },
        'llama3.2 answered HTTP 500',
      ],
      [answerWith(''), 'llama3.2 answered no prompt'],
      [answerWith(null), 'llama3.2 answered no prompt'],
      [
        (_r, res) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{"choices": [');
        },
        'llama3.2 could not be asked (',
      ],
      [
        (_r, res) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(completion('x'.repeat(300 * 1024))));
        },
        'llama3.2 could not be asked (its answer passed 262144 bytes)',
      ],
    ];
    for (const [answering, why] of cases) {
      answer = answering;
      const out = await enhancer().enhance('a lighthouse', never);
      expect(out.prompt).toBe('a lighthouse');
      expect(out.note).toContain(`enhance_prompt: ${why}`);
      expect(out.note).toMatch(/so the prompt was used as given$/);
    }
  });

  it('uses the prompt as given when the model does not answer within its timeout', async () => {
    // The stand-in holds the request; the enhancer gives up after its 1 s.
    answer = () => {};
    const out = await enhancer({ timeoutMs: 1_000 }).enhance('a lighthouse', never);
    expect(out).toEqual({
      prompt: 'a lighthouse',
      note: 'enhance_prompt: llama3.2 did not answer within 1 s, so the prompt was used as given',
    });
  });

  it("stops with the task: an aborted task's question is not answered", async () => {
    answer = () => {};
    const stop = new AbortController();
    const asked = enhancer().enhance('a lighthouse', stop.signal);
    stop.abort(new Error('the attempt was aborted'));
    await expect(asked).rejects.toThrow('the attempt was aborted');
  });

  it('is built from its settings, and a malformed one stops the start naming it', () => {
    expect(promptEnhancerFromEnv({})).toEqual({});
    expect(promptEnhancerFromEnv({ PROMPT_ENHANCER_URL: ' ' })).toEqual({});
    const built = promptEnhancerFromEnv({ PROMPT_ENHANCER_URL: chatUrl, PROMPT_ENHANCER_MODEL: 'llama3.2' });
    expect(built.promptEnhancer?.model).toBe('llama3.2');
    expect(() => promptEnhancerFromEnv({ PROMPT_ENHANCER_URL: chatUrl })).toThrow(/^PROMPT_ENHANCER_MODEL: /);
    expect(() =>
      promptEnhancerFromEnv({ PROMPT_ENHANCER_URL: 'ollama:11434', PROMPT_ENHANCER_MODEL: 'm' }),
    ).toThrow('PROMPT_ENHANCER_URL: "ollama:11434" is not an http(s) URL');
    expect(() =>
      promptEnhancerFromEnv({ PROMPT_ENHANCER_URL: 'not a url', PROMPT_ENHANCER_MODEL: 'm' }),
    ).toThrow('PROMPT_ENHANCER_URL: "not a url" is not a URL');
    for (const timeout of ['0', '601', '1.5', 'soon']) {
      expect(() =>
        promptEnhancerFromEnv({
          PROMPT_ENHANCER_URL: chatUrl,
          PROMPT_ENHANCER_MODEL: 'm',
          PROMPT_ENHANCER_TIMEOUT_SECONDS: timeout,
        }),
      ).toThrow(`PROMPT_ENHANCER_TIMEOUT_SECONDS: "${timeout}" is not a whole number from 1 to 600`);
    }
  });
});

describe('enhance_prompt through the API', () => {
  let db: TestDatabase;
  let key: string;
  const apis: LoopbackApi[] = [];
  /** The prompts the recording engine was handed. */
  const drawn: string[] = [];
  const recording: Engine = {
    name: 'recording',
    pipelines: ['/generate/v3'],
    async run(job: EngineJob) {
      drawn.push(String(job.input.prompt));
      return { images: [await png(64, 64)] };
    },
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    key = (await createOwner(db.pool, { name: 'magic-prompt', plan: 'UNLIMITED' })).apiKey;
  });
  afterAll(async () => {
    for (const api of apis) await api.close();
    await db?.drop();
  });

  it('draws the rewritten prompt, and the status says what it was', async () => {
    answer = answerWith('A lighthouse at dawn, long exposure, pastel sky');
    const api = await startLoopbackApi({
      pool: db.pool,
      engines: createEngineRegistry([recording], { enabled: ['recording'], pinned: {} }),
      // What `npm start` hands its worker for these settings.
      worker: promptEnhancerFromEnv({ PROMPT_ENHANCER_URL: chatUrl, PROMPT_ENHANCER_MODEL: 'llama3.2' }),
    });
    apis.push(api);
    const { submit, settle } = apiCalls(() => api.url);
    const id = await submit('/generate/v3', { prompt: 'a lighthouse', enhance_prompt: true }, key);
    const status = await settle('/generate/v3', id, key);
    expect(status).toMatchObject({
      status: 'SUCCESS',
      notes: [
        'enhance_prompt: the prompt was rewritten by llama3.2 before generating: "A lighthouse at dawn, long exposure, pastel sky"',
      ],
    });
    expect(drawn.at(-1)).toBe('A lighthouse at dawn, long exposure, pastel sky');
    // Without enhance_prompt, nothing is asked and nothing noted.
    const plain = await settle('/generate/v3', await submit('/generate/v3', { prompt: 'a boat' }, key), key);
    expect(plain.status).toBe('SUCCESS');
    expect(plain).not.toHaveProperty('notes');
    expect(drawn.at(-1)).toBe('a boat');
  });

  it('runs the task with the prompt as given on a deployment with no language model, and says so', async () => {
    // The engines `npm start` sets up by default for this path: the sandbox.
    const { registry } = await setUpEngines([sandboxEngineModule], { IMAGEGEN_ENGINES: 'sandbox' });
    const api = await startLoopbackApi({ pool: db.pool, engines: registry });
    apis.push(api);
    const { submit, settle } = apiCalls(() => api.url);
    const id = await submit(
      '/generate/v3',
      { prompt: 'a lighthouse', enhance_prompt: true, palette: ['#006400', '', '', '', ''], samples: 1 },
      key,
    );
    const status = await settle('/generate/v3', id, key);
    expect(status).toMatchObject({ status: 'SUCCESS', notes: [NO_ENHANCER_NOTE] });
    await registry.close();
  });
});
