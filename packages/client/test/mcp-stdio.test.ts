import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, imagegen } from './support/imagegen-command.ts';
import { startTestApi, type TestApi } from './support/test-api.ts';

/**
 * `imagegen mcp` as a desktop agent runs it: a child process spoken to over stdio by MCP's own
 * TypeScript SDK (`StdioClientTransport`), relaying to the real API's /mcp (sandbox engine, 1.5 s
 * of simulated work per task, with progress): the same tools as the API's, a call with its progress
 * notifications and its image.
 */

let api: TestApi;
let dir: string;
let client: Client;
let stderr = '';

beforeAll(async () => {
  api = await startTestApi({ delayMs: 1500 });
  dir = await mkdtemp(path.join(tmpdir(), 'imagegen-mcp-'));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp'],
    // XDG_CONFIG_HOME: an empty folder, so no config file of the machine's user is read.
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      IMAGEGEN_API_KEY: api.key,
      IMAGEGEN_BASE_URL: api.url,
      XDG_CONFIG_HOME: dir,
    },
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  client = new Client({ name: 'desktop-agent', version: '1.0.0' });
  await client.connect(transport);
});

afterAll(async () => {
  await client?.close();
  await api?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('imagegen mcp', () => {
  it("serves the API's own tools, as its /mcp lists them", async () => {
    const direct = new Client({ name: 'direct', version: '1.0.0' });
    await direct.connect(
      new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${api.key}` } },
      }),
    );
    try {
      expect((await client.listTools()).tools).toEqual((await direct.listTools()).tools);
    } finally {
      await direct.close();
    }
    expect(client.getServerVersion()).toMatchObject({ name: 'imagegen' });
  });

  it('calls a tool, relaying its progress, and answers its image', async () => {
    const progress: Progress[] = [];
    const result = (await client.callTool(
      {
        name: 'sd_text2image_v1',
        arguments: { prompt: 'a lighthouse at dawn', negative_prompt: '', width: 64, height: 64, samples: 3 },
      },
      undefined,
      { onprogress: (step) => progress.push(step), resetTimeoutOnProgress: true, timeout: 60_000 },
    )) as CallToolResult;
    expect(result.isError).toBeFalsy();
    // The sandbox reports after each of its 3 samples; the first report says the task queued.
    expect(progress.length).toBeGreaterThan(1);
    expect(progress[0]).toMatchObject({ progress: 0, total: 1 });
    const values = progress.map((step) => step.progress);
    expect(values).toEqual([...new Set(values)].sort());
    const images = result.content.filter((part) => part.type === 'image') as {
      data: string;
      mimeType: string;
    }[];
    expect(images).toHaveLength(3);
    for (const image of images) {
      expect(image.mimeType).toBe('image/png');
      expect(await sharp(Buffer.from(image.data, 'base64')).metadata()).toMatchObject({
        width: 64,
        height: 64,
      });
    }
    expect(stderr).toBe('');
  });

  it('exits 4 with words on stderr, and nothing on stdout, when the API refuses the key', async () => {
    const result = await imagegen(['mcp'], {
      env: {
        IMAGEGEN_API_KEY: 'ig_wrongwrongwrongwrongwrongwrong1',
        IMAGEGEN_BASE_URL: api.url,
        XDG_CONFIG_HOME: dir,
      },
    });
    expect(result.code).toBe(4);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(`imagegen: the MCP server at ${api.url}/mcp did not answer:`);
    expect(result.stderr).toContain('Invalid API key');
  });
});
