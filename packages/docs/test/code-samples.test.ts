import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { compileRequestValidator, endpointByPath } from '@imagegen/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  curlSample,
  pythonSample,
  type SampleInput,
  typescriptSample,
} from '../src/components/code-samples.ts';

const run = promisify(execFile);
const KEY = 'sample-test-key';
const TSX = path.resolve(import.meta.dirname, '../../../node_modules/.bin/tsx');

/**
 * A loopback stand-in for the API that checks what the samples send exactly as the API would:
 * the API-Key header, the path, and the body against the contract's validator. A task answers
 * PENDING once, then its final shape.
 */
let server: Server;
let apiUrl: string;
let dir: string;
const received: { method: string; path: string; body?: unknown }[] = [];
const polls = new Map<string, number>();

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'docs-samples-'));
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = req.url ?? '';
      const reply = (status: number, body: unknown) => {
        res.writeHead(status, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (req.headers['api-key'] !== KEY) return reply(401, { detail: 'Missing or unknown API key' });
      if (req.method === 'POST') {
        const endpoint = endpointByPath(url);
        const body = JSON.parse(Buffer.concat(chunks).toString() || 'null');
        received.push({ method: 'POST', path: url, body });
        // The validator fills defaults in place: keep what was sent.
        const result = compileRequestValidator(endpoint!)(structuredClone(body));
        if (!result.ok) return reply(422, { detail: result.detail });
        return reply(
          200,
          url.startsWith('/train_model/')
            ? { id: 'job-1', status: 'queued' }
            : { status: 'PENDING', id: 'task-1' },
        );
      }
      received.push({ method: 'GET', path: url });
      const count = (polls.get(url) ?? 0) + 1;
      polls.set(url, count);
      if (url.startsWith('/train_model/')) {
        return reply(
          200,
          count < 2
            ? { status: 'running' }
            : { status: 'completed', model_id: 'model-7', training_duration_seconds: 12 },
        );
      }
      return reply(
        200,
        count < 2
          ? { status: 'PENDING' }
          : { status: 'SUCCESS', download_urls: ['http://files.test/out-1.png'] },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

function input(apiPath: string, statusPath: string): SampleInput {
  const endpoint = endpointByPath(apiPath);
  return {
    apiUrl,
    path: apiPath,
    statusPath,
    body: endpoint?.example as Record<string, unknown>,
    kind: apiPath.startsWith('/train_model/') ? 'training' : 'task',
  };
}

async function runSample(file: string, source: string, command: string, args: string[] = []) {
  const full = path.join(dir, file);
  await writeFile(full, source);
  polls.clear();
  const { stdout } = await run(command, [...args, full], {
    env: { ...process.env, IMAGEGEN_API_KEY: KEY, TASK_ID: 'task-1' },
    timeout: 45_000,
  });
  return stdout;
}

describe('the request examples on every pipeline page', () => {
  const cases = [
    ['/sd/text2image/v1', '/sd/text2image/v1/status/{task_id}', 'out-1.png'],
    ['/faceswap/v1', '/faceswap/v1/status/{task_id}', 'out-1.png'],
    ['/train_model/v1', '/train_model/v1/status/{training_id}', 'model-7'],
  ] as const;

  for (const [apiPath, statusPath, result] of cases) {
    it(`submit a valid ${apiPath} body and poll to the result, in Python`, async () => {
      const stdout = await runSample('sample.py', pythonSample(input(apiPath, statusPath)), 'python3');
      expect(stdout).toContain(result);
    });

    it(`submit a valid ${apiPath} body and poll to the result, in TypeScript`, async () => {
      const stdout = await runSample('sample.mts', typescriptSample(input(apiPath, statusPath)), TSX);
      expect(stdout).toContain(result);
    });
  }

  it('submit with curl a body the contract accepts, then read the status path', async () => {
    received.length = 0;
    const stdout = await runSample(
      'sample.sh',
      curlSample(input('/sd/text2image/v1', '/sd/text2image/v1/status/{task_id}')),
      'bash',
    );
    expect(stdout).toContain('"status":"PENDING"');
    expect(received.map((r) => `${r.method} ${r.path}`)).toEqual([
      'POST /sd/text2image/v1',
      'GET /sd/text2image/v1/status/task-1',
    ]);
    expect(received[0]!.body).toEqual(endpointByPath('/sd/text2image/v1')!.example);
  });
});
