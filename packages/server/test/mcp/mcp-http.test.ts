import { endpoints } from '@imagegen/contract';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import type { ApiHarness } from '../support/api-harness.ts';
import { eventually } from '../support/fakes.ts';
import { gatedApi, uniqueName } from '../support/gated-engine.ts';

/**
 * The MCP server at /mcp as MCP's own TypeScript SDK (`@modelcontextprotocol/sdk`) reaches it over
 * Streamable HTTP with a Bearer key, against the real API, its worker and a test engine the test
 * holds and steers: the tools the contract makes, a call with its progress notifications and its
 * image, and what an agent is told when its arguments are wrong or its task outlives the wait.
 */

/** A tool call that outlives its wait here: 1.5 s. Images above 1000 bytes go as links. */
const gated = gatedApi({ mcp: { waitMs: 1500, inlineImageBytes: 1000 } });
const clients: Client[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
});

async function connect(api: ApiHarness, key = api.alice.key): Promise<Client> {
  const client = new Client({ name: 'imagegen-tests', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

function texts(result: CallToolResult): string {
  return result.content
    .filter((part) => part.type === 'text')
    .map((part) => (part as { text: string }).text)
    .join('\n');
}

describe('the MCP server over Streamable HTTP', () => {
  it('offers one tool per pipeline, its input schema the contract’s, and task_status', async () => {
    const client = await connect(gated.api);
    expect(client.getServerVersion()).toMatchObject({ name: 'imagegen' });
    const { tools } = await client.listTools();
    const pipelines = endpoints.filter((endpoint) => endpoint.kind === 'generation');
    expect(tools.map((tool) => tool.name)).toEqual([
      ...pipelines.map((endpoint) => endpoint.path.slice(1).replace(/[^A-Za-z0-9_-]+/g, '_')),
      'task_status',
    ]);
    const text2image = tools.find((tool) => tool.name === 'sd_text2image_v1')!;
    const contract = pipelines.find((endpoint) => endpoint.path === '/sd/text2image/v1')!;
    expect(text2image.inputSchema).toEqual(JSON.parse(JSON.stringify(contract.request)));
    expect(text2image.title).toBe(contract.summary);
  });

  it('runs a call as a task, telling its progress, and answers its image inline', async () => {
    const { api, engine } = gated;
    const client = await connect(api);
    const name = uniqueName();
    const gate = engine.gate(name);
    const progress: Progress[] = [];
    const calling = client.callTool(
      {
        name: 'sd_text2image_v1',
        arguments: { prompt: `gate:${name} a fox`, negative_prompt: '', width: 64, height: 48 },
      },
      undefined,
      { onprogress: (step) => progress.push(step), resetTimeoutOnProgress: true },
    );
    await gate.started;
    gate.progress(0.5);
    await eventually(async () => (progress.some((step) => step.progress === 0.5) ? true : undefined));
    gate.open();
    const result = (await calling) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(progress[0]).toMatchObject({ progress: 0, total: 1 });
    expect(progress.map((step) => step.progress)).toEqual([...progress.map((step) => step.progress)].sort());
    expect(progress.find((step) => step.progress === 0.5)?.message).toBe('running, 50 %');
    const image = result.content.find((part) => part.type === 'image') as { data: string; mimeType: string };
    expect(image.mimeType).toBe('image/png');
    expect(await sharp(Buffer.from(image.data, 'base64')).metadata()).toMatchObject({
      width: 64,
      height: 48,
    });
    expect(texts(result)).toMatch(/^Task [0-9a-f-]{36} of sd_text2image_v1 succeeded with 1 image:\nhttp/);
  });

  it('answers a large image as a link to the file, and text where the pipeline answers text', async () => {
    const client = await connect(gated.api);
    const large = (await client.callTool({
      name: 'sdxl_text2image_v1',
      arguments: { prompt: 'a wide field', negative_prompt: '', width: 512, height: 512 },
    })) as CallToolResult;
    const link = large.content.find((part) => part.type === 'resource_link') as {
      uri: string;
      mimeType: string;
    };
    expect(link.mimeType).toBe('image/png');
    expect(link.uri.startsWith(`${gated.api.url}/files/`)).toBe(true);
    const served = await fetch(link.uri);
    expect(await sharp(Buffer.from(await served.arrayBuffer())).metadata()).toMatchObject({
      width: 512,
      height: 512,
    });
    const described = (await client.callTool({
      name: 'image2prompt_v1',
      arguments: { input_image: `${gated.api.imagesUrl}/photo.png` },
    })) as CallToolResult;
    expect(texts(described)).toMatch(/succeeded: a plain test picture$/);
  });

  it("tells the agent what its arguments lack, in the API's words, and refuses an unknown tool", async () => {
    const client = await connect(gated.api);
    const refused = (await client.callTool({
      name: 'sd_text2image_v1',
      arguments: { prompt: 'x', samples: 9 },
    })) as CallToolResult;
    expect(refused.isError).toBe(true);
    expect(texts(refused)).toBe(
      "sd_text2image_v1 refused its arguments (the API's 422):\n" +
        'negative_prompt: field required\nsamples: ensure this value is less than or equal to 4',
    );
    await expect(client.callTool({ name: 'sd_text2image_v9', arguments: {} })).rejects.toThrow(
      'Unknown tool: sd_text2image_v9',
    );
  });

  it('names the task when it outlives the wait; task_status gives its image once it ended', async () => {
    const { api, engine } = gated;
    const client = await connect(api);
    const name = uniqueName();
    const waited = (await client.callTool({
      name: 'sd_text2image_v1',
      arguments: { prompt: `gate:${name} slow`, negative_prompt: '', width: 32, height: 32 },
    })) as CallToolResult;
    expect(waited.isError).toBe(true);
    const id = /Task ([0-9a-f-]{36}) of sd_text2image_v1 had not ended after 2 s; it goes on/.exec(
      texts(waited),
    )?.[1];
    expect(id).toBeDefined();
    const pending = (await client.callTool({
      name: 'task_status',
      arguments: { tool: 'sd_text2image_v1', task_id: id },
    })) as CallToolResult;
    expect(texts(pending)).toBe(`Task ${id} of sd_text2image_v1 is running, 0 %.`);
    engine.gate(name).open();
    await api.settle(`/sd/text2image/v1/status/${id}`, api.alice.key);
    const done = (await client.callTool({
      name: 'task_status',
      arguments: { tool: 'sd_text2image_v1', task_id: id },
    })) as CallToolResult;
    expect(done.content.some((part) => part.type === 'image')).toBe(true);
    // Another owner's task is no task of theirs.
    const bob = await connect(api, api.bob.key);
    const stranger = (await bob.callTool({
      name: 'task_status',
      arguments: { tool: 'sd_text2image_v1', task_id: id },
    })) as CallToolResult;
    expect(stranger).toMatchObject({ isError: true });
    expect(texts(stranger)).toBe(`task_status: sd_text2image_v1 has no task ${id}`);
  });

  it('refuses a wrong key before any MCP message, as the API does', async () => {
    await expect(connect(gated.api, 'ig_wrongwrongwrongwrongwrongwrong1')).rejects.toThrow('Invalid API key');
    const unkeyed = await fetch(`${gated.api.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(unkeyed.status).toBe(401);
    expect(unkeyed.headers.get('www-authenticate')).toBe('Bearer');
    expect(await unkeyed.json()).toEqual({
      jsonrpc: '2.0',
      error: { code: -32001, message: 'Missing API key: send it in the API-Key header' },
      id: null,
    });
  });
});
