import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { imagegen } from './support/imagegen-command.ts';
import { startTestApi, type TestApi } from './support/test-api.ts';

/**
 * The package as it ships: `npm pack` builds it (prepack), a global install from the tarball gives
 * a working `imagegen`, and a project that installs the tarball gets the SDK with no other package
 * and declarations that type its calls as the repository's source does. All offline.
 */

const run = promisify(execFile);
const packageDir = path.resolve(import.meta.dirname, '..');

let api: TestApi;
let dir: string;
let tarball: string;
let env: Record<string, string>;

beforeAll(async () => {
  api = await startTestApi();
  dir = await mkdtemp(path.join(tmpdir(), 'imagegen-pack-'));
  env = { IMAGEGEN_API_KEY: api.key, IMAGEGEN_BASE_URL: api.url, XDG_CONFIG_HOME: dir };
  const { stdout } = await run('npm', ['pack', '--pack-destination', dir, '--json'], {
    cwd: packageDir,
    timeout: 120_000,
  });
  tarball = path.join(dir, (JSON.parse(stdout) as { filename: string }[])[0]!.filename);
  const offline = ['--offline', '--no-audit', '--no-fund'];
  await run('npm', ['install', '-g', '--prefix', path.join(dir, 'global'), tarball, ...offline], {
    timeout: 120_000,
  });
  const app = path.join(dir, 'app');
  await mkdir(app);
  await writeFile(
    path.join(app, 'package.json'),
    JSON.stringify({ name: 'app', private: true, type: 'module' }),
  );
  await run('npm', ['install', tarball, ...offline], { cwd: app, timeout: 120_000 });
});

afterAll(async () => {
  await api?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('the packed package', () => {
  it('installs globally, and its imagegen runs a task', async () => {
    const program = path.join(dir, 'global/bin/imagegen');
    const result = await imagegen(
      [
        'run',
        'sd/text2image',
        '--prompt',
        'a boat',
        '--negative-prompt',
        '',
        '--width',
        '64',
        '--height',
        '64',
        '--json',
      ],
      { env, program },
    );
    expect(result.stderr).not.toContain('imagegen:');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'SUCCESS' });
  });

  it("installs an imagegen whose mcp serves the API's tools over stdio, the MCP SDK inside it", async () => {
    const client = new Client({ name: 'desktop-agent', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: path.join(dir, 'global/bin/imagegen'),
        args: ['mcp'],
        env: { PATH: process.env.PATH ?? '', ...env },
      }),
    );
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toContain('sd_text2image_v1');
    } finally {
      await client.close();
    }
  });

  it('gives a project the SDK with no other package', async () => {
    const app = path.join(dir, 'app');
    const installed = (await readdir(path.join(app, 'node_modules'))).filter((name) => !name.startsWith('.'));
    expect(installed).toEqual(['@imagegen']);
    expect(await readdir(path.join(app, 'node_modules/@imagegen'))).toEqual(['client']);
    await writeFile(
      path.join(app, 'run.js'),
      `import { createClient } from '@imagegen/client';
const client = createClient();
const result = await client.run('/sd/text2image/v1', { prompt: 'a boat', negative_prompt: '', width: 64, height: 64 });
console.log(JSON.stringify(result));
`,
    );
    const { stdout } = await run(process.execPath, ['run.js'], { cwd: app, env: { ...process.env, ...env } });
    expect(JSON.parse(stdout)).toMatchObject({ status: 'SUCCESS' });
  });

  it('ships declarations that stand alone and type calls from the contract', async () => {
    const app = path.join(dir, 'app');
    const file = path.join(app, 'typed.ts');
    await writeFile(
      file,
      `import { createClient } from '@imagegen/client';
import { saveOutputs } from '@imagegen/client/node';
const client = createClient();
const done = await client.run('/sd/text2image/v1', { prompt: 'a', negative_prompt: '', samples: 2 });
const urls: string[] | null = done.download_urls;
await saveOutputs(client, urls ?? [], 'out');
await client.run('/sd/text2image/v1', { prompt: 'a', negative_prompt: '', sample: 2 });
const count: number = done.download_urls;
await client.run('/sd/text2image/v1', { prompt: 'a', negative_prompt: '', samples: 9, guidance_scale: 7.5 });
await client.tasks({ limit: 500 });
`,
    );
    const program = ts.createProgram([file], {
      target: ts.ScriptTarget.ES2023,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
      types: [],
      strict: true,
      noEmit: true,
    });
    const errors = ts.getPreEmitDiagnostics(program).map((diagnostic) => ({
      file: path.relative(app, diagnostic.file?.fileName ?? ''),
      line: (diagnostic.file?.getLineAndCharacterOfPosition(diagnostic.start ?? 0).line ?? -1) + 1,
      message: ts.flattenDiagnosticMessageText(diagnostic.messageText, ' '),
    }));
    expect(errors.map(({ file, line }) => `${file}:${line}`)).toEqual([
      'typed.ts:7',
      'typed.ts:8',
      'typed.ts:9',
      'typed.ts:10',
    ]);
    expect(errors[0]!.message).toContain("'sample' does not exist");
    expect(errors[1]!.message).toContain("'string[] | null' is not assignable to type 'number'");
    expect(errors[2]!.message).toContain('samples must be <= 4');
    expect(errors[3]!.message).toContain('limit must be <= 100');
  });
});
