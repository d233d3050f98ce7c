import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { compileRequestValidator, endpointByPath, endpoints } from '@imagegen/contract';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cliSample,
  curlSample,
  pythonSample,
  type SampleInput,
  type SampleKind,
  sdkSample,
  typescriptSample,
} from '../src/components/code-samples.ts';

const run = promisify(execFile);
const KEY = 'sample-test-key';
const TSX = path.resolve(import.meta.dirname, '../../../node_modules/.bin/tsx');
/** The client package: the SDK samples import it, the CLI samples run its `imagegen`. */
const CLIENT = path.dirname(createRequire(import.meta.url).resolve('@imagegen/client/package.json'));

/**
 * A loopback stand-in for the API that checks what the samples send exactly as the API would:
 * the API-Key header, the path, and the body against the contract's validator. A task answers
 * PENDING once, then its final shape; its output link is served (without a key, as the API's
 * /files/ links are). It offers no status stream: the SDK and the command poll it.
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
      if (url.startsWith('/files/')) return res.writeHead(200, { 'Content-Type': 'image/png' }).end('png');
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
          : { status: 'SUCCESS', download_urls: [`${apiUrl}/files/out-1.png`] },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // The samples' folder resolves `@imagegen/client` and finds `imagegen` as a user's would.
  await mkdir(path.join(dir, 'node_modules/@imagegen'), { recursive: true });
  await symlink(CLIENT, path.join(dir, 'node_modules/@imagegen/client'));
  await mkdir(path.join(dir, 'bin'));
  await symlink(path.join(CLIENT, 'bin/imagegen.js'), path.join(dir, 'bin/imagegen'));
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
    cwd: dir,
    env: {
      ...process.env,
      IMAGEGEN_API_KEY: KEY,
      TASK_ID: 'task-1',
      PATH: `${path.join(dir, 'bin')}:${process.env.PATH}`,
      XDG_CONFIG_HOME: dir,
    },
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

    it(`submit a valid ${apiPath} body and follow it to the result, with the TypeScript SDK`, async () => {
      received.length = 0;
      // The SDK's source, as the repository's workspaces import it.
      const source = sdkSample(input(apiPath, statusPath));
      const stdout = await runSample('sample-sdk.mts', source, TSX, ['--conditions=imagegen-source']);
      expect(stdout).toContain(result);
      expect(received[0]).toEqual({ method: 'POST', path: apiPath, body: endpointByPath(apiPath)!.example });
    });

    it(`submit a valid ${apiPath} body and follow it to the result, with the imagegen command`, async () => {
      received.length = 0;
      const stdout = await runSample('sample-cli.sh', cliSample(input(apiPath, statusPath)), 'bash');
      expect(stdout).toContain(
        apiPath === '/train_model/v1' ? result : path.join('outputs', 'task-1-out-1.png'),
      );
      expect(received[0]).toEqual({ method: 'POST', path: apiPath, body: endpointByPath(apiPath)!.example });
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

/** Every operation's SDK sample, as the endpoint pages render them. */
function sdkSamples(): { path: string; source: string }[] {
  return endpoints.flatMap((endpoint) => {
    const kind: SampleKind | undefined =
      endpoint.kind === 'upload'
        ? 'upload'
        : endpoint.kind === 'record' && endpoint.method === 'GET'
          ? 'read'
          : endpoint.kind === 'training'
            ? 'training'
            : endpoint.status
              ? 'task'
              : undefined;
    if (!kind) return [];
    const body = endpoint.example as Record<string, unknown> | undefined;
    return [
      {
        path: endpoint.path,
        source: sdkSample({ apiUrl: 'http://localhost:8000', path: endpoint.path, body, kind }),
      },
    ];
  });
}

describe('the TypeScript samples of the SDK', () => {
  it("compile against @imagegen/client: every endpoint page's tab and the Client libraries page", async () => {
    const page = await readFile(
      path.join(import.meta.dirname, '../docs/Introduction/client-libraries.mdx'),
      'utf8',
    );
    const blocks = [...page.matchAll(/```ts\n([\s\S]*?)```/g)].map((match, n) => ({
      path: `client-libraries block ${n + 1}`,
      source: match[1]!,
    }));
    expect(blocks.length).toBeGreaterThanOrEqual(4);
    const samples = [...sdkSamples(), ...blocks];
    expect(samples.length).toBeGreaterThan(40);
    const files = await Promise.all(
      samples.map(async (sample, n) => {
        const file = path.join(dir, `typed-${n}.mts`);
        // The page's snippets use a client made elsewhere on the page.
        const prelude =
          sample.path.startsWith('client-libraries') && !sample.source.includes('createClient(')
            ? "import { createClient } from '@imagegen/client';\nconst client = createClient();\n"
            : '';
        await writeFile(file, `${prelude}${sample.source}\nexport {};\n`);
        return { file, sample };
      }),
    );
    const program = ts.createProgram(
      files.map(({ file }) => file),
      {
        target: ts.ScriptTarget.ES2023,
        module: ts.ModuleKind.ESNext,
        moduleResolution: ts.ModuleResolutionKind.Bundler,
        customConditions: ['imagegen-source'],
        allowImportingTsExtensions: true,
        lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
        types: ['node'],
        typeRoots: [path.resolve(import.meta.dirname, '../../../node_modules/@types')],
        strict: true,
        noUncheckedIndexedAccess: true,
        skipLibCheck: true,
        noEmit: true,
      },
    );
    const problems = ts
      .getPreEmitDiagnostics(program)
      .filter((diagnostic) => diagnostic.file?.fileName.startsWith(dir))
      .map((diagnostic) => {
        const at = files.find(({ file }) => file === diagnostic.file?.fileName)?.sample.path;
        return `${at}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')}`;
      });
    expect(problems).toEqual([]);
  });
});
