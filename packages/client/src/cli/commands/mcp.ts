import { Readable, Writable } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { parseArgs } from '../args.ts';
import { type CliContext, single, switchOn } from '../context.ts';
import { EXIT } from '../exit-codes.ts';
import { mcpHelp } from '../help.ts';
import { readSettings } from '../settings.ts';

/**
 * `imagegen mcp`: the API's MCP server over stdio, for desktop agents that start their tools as
 * programs. It relays every request to the configured API's `/mcp` (Streamable HTTP, the key as
 * Bearer token) and every answer and progress notification back, so the tools are the API's own:
 * one per pipeline of the API it talks to. stdout carries the protocol only; anything said goes to
 * stderr.
 */

/** Longer than any wait the API allows a tool call (MCP_WAIT_SECONDS is at most an hour). */
const CALL_TIMEOUT_MS = 3_700_000;

const OPTIONS = [
  { flag: '--base-url', takesValue: true },
  { flag: '--help', takesValue: false },
] as const;

export async function mcpCommand(argv: readonly string[], context: CliContext): Promise<number> {
  const { values } = parseArgs(argv, [...OPTIONS]);
  if (switchOn(values, '--help')) {
    context.stdout.write(mcpHelp());
    return EXIT.ok;
  }
  const settings = await readSettings(context.env, single(values, '--base-url'));
  const remote = new Client({ name: 'imagegen-mcp-stdio', version: '1.0.0' });
  const endpoint = new URL('/mcp', settings.baseUrl);
  try {
    await remote.connect(
      new StreamableHTTPClientTransport(endpoint, {
        requestInit: { headers: settings.apiKey ? { Authorization: `Bearer ${settings.apiKey}` } : {} },
      }),
    );
  } catch (error) {
    context.stderr.write(
      `imagegen: the MCP server at ${endpoint} did not answer: ${(error as Error).message}\n` +
        '  (the address comes from IMAGEGEN_BASE_URL or --base-url, the key from IMAGEGEN_API_KEY)\n',
    );
    return EXIT.unavailable;
  }

  const info = remote.getServerVersion() ?? { name: 'imagegen', version: '1.0.0' };
  const instructions = remote.getInstructions();
  const server = new Server(info, { capabilities: { tools: {} }, ...(instructions ? { instructions } : {}) });
  server.setRequestHandler(ListToolsRequestSchema, (request) => remote.listTools(request.params));
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
    const token = request.params._meta?.progressToken;
    const { _meta, ...params } = request.params;
    return remote.callTool(params, undefined, {
      signal: extra.signal,
      timeout: CALL_TIMEOUT_MS,
      resetTimeoutOnProgress: true,
      ...(token === undefined
        ? {}
        : {
            onprogress: (progress) =>
              void extra
                .sendNotification({
                  method: 'notifications/progress',
                  params: { ...progress, progressToken: token },
                })
                .catch(() => {}),
          }),
    });
  });

  const input = Readable.from(context.stdin);
  const output = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      context.stdout.write(chunk.toString());
      done();
    },
  });
  const ended = new Promise<void>((resolve) => {
    input.once('end', resolve);
    input.once('error', resolve);
    context.interrupted.addEventListener('abort', () => resolve(), { once: true });
  });
  await server.connect(new StdioServerTransport(input, output));
  // The agent closes stdin when it is done with the server.
  await ended;
  await server.close();
  await remote.close();
  return EXIT.ok;
}
