import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import type { FastifyError, FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import { type BodyLimits, describeFastifyError, HttpError } from '../http/http-errors.ts';
import { ReceivedBody } from '../http/request-bodies.ts';
import { TOOLS, TOOLS_BY_NAME } from './pipeline-tools.ts';
import { callTool, type McpOptions } from './tool-calls.ts';

/**
 * The MCP server at `/mcp` (Streamable HTTP, stateless: each POST carries its JSON-RPC messages
 * and gets its answers, a tool call's progress notifications first, on one SSE stream), for agents
 * to call the pipelines as tools with an API key as Bearer token. Its own scope: its hooks and
 * error shapes never run for the API's paths. `imagegen mcp` serves the same tools over stdio.
 */

/** What `initialize` answers as this server's name and version. */
export const MCP_SERVER_INFO = { name: 'imagegen', version: '1.0.0' } as const;

const INSTRUCTIONS =
  'Each tool runs one image pipeline of this API as a task and waits for it: pass the fields its input ' +
  'schema names (image inputs are public http(s) URLs), and read the images from the result. ' +
  'A call that stops waiting names its task: task_status reads it later.';

/** A JSON-RPC error as the answer of a request that never reached the MCP server. */
function rpcError(code: number, message: string) {
  return { jsonrpc: '2.0', error: { code, message }, id: null };
}

export async function mcpRoutes(
  scope: FastifyInstance,
  options: McpOptions & { authenticate: onRequestHookHandler; limits: BodyLimits },
): Promise<void> {
  scope.decorateRequest('caller', null);
  scope.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof HttpError) {
      if (error.headers) reply.headers(error.headers);
      if (error.statusCode === 401) reply.header('www-authenticate', 'Bearer');
      return reply.code(error.statusCode).send(rpcError(-32001, error.message));
    }
    const known = describeFastifyError(error, options.limits);
    if (known) return reply.code(known[0]).send(rpcError(-32000, known[1]));
    request.log.error({ err: error }, 'request failed');
    return reply.code(500).send(rpcError(ErrorCode.InternalError, 'Internal server error'));
  });
  // Browser clients (MCP's inspector) send MCP's own headers.
  scope.options('/mcp', async (request, reply) =>
    reply
      .code(204)
      .header('access-control-allow-methods', 'GET, POST, DELETE, OPTIONS')
      .header('access-control-allow-headers', request.headers['access-control-request-headers'] ?? '*')
      .header('access-control-max-age', '86400')
      .send(),
  );
  scope.addHook('onRequest', function authenticateMcp(request, reply, done) {
    if (request.method === 'OPTIONS') return done();
    options.authenticate.call(this, request, reply, done);
  });

  // Stateless: no stream for server-initiated messages, no session to delete.
  const notAllowed = async (_request: FastifyRequest, reply: import('fastify').FastifyReply) =>
    reply
      .code(405)
      .header('allow', 'POST, OPTIONS')
      .send(
        rpcError(-32000, 'Method not allowed: this server is stateless; POST JSON-RPC messages to /mcp.'),
      );
  scope.get('/mcp', notAllowed);
  scope.delete('/mcp', notAllowed);

  scope.post('/mcp', async (request, reply) => {
    let message: unknown;
    try {
      message = JSON.parse(request.body instanceof ReceivedBody ? request.body.bytes.toString('utf8') : '');
    } catch {
      return reply.code(400).send(rpcError(ErrorCode.ParseError, 'Parse error: the body is not JSON'));
    }
    // A client that goes away stops the calls it made waiting (their tasks go on).
    const gone = new AbortController();
    const server = mcpServer(options, request, gone.signal);
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    await server.connect(transport);
    reply.raw.once('close', () => {
      gone.abort();
      void transport.close();
      void server.close();
    });
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers)) {
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    const web = new Request(`http://${request.headers.host ?? 'localhost'}${request.url}`, {
      method: 'POST',
      headers,
    });
    return reply.send(await transport.handleRequest(web, { parsedBody: message }));
  });
}

/** The server one HTTP request talks to: the tools, called as the request's key's owner. */
function mcpServer(options: McpOptions, request: FastifyRequest, gone: AbortSignal): Server {
  const server = new Server(MCP_SERVER_INFO, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: TOOLS.map(({ name, title, description, inputSchema }) => ({
      name,
      title,
      description,
      inputSchema,
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (call, extra) => {
    const tool = TOOLS_BY_NAME.get(call.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${call.params.name}`);
    const token = call.params._meta?.progressToken;
    return callTool(options, request, tool, call.params.arguments ?? {}, {
      signal: AbortSignal.any([extra.signal, gone]),
      progress: async (progress, message) => {
        if (token === undefined) return;
        await extra.sendNotification({
          method: 'notifications/progress',
          params: { progressToken: token, progress, total: 1, message },
        });
      },
    });
  });
  return server;
}
