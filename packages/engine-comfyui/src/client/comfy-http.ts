import http from 'node:http';
import https from 'node:https';
import { ServerRefusedError, ServerUnavailableError } from '../contracts.ts';

/**
 * HTTP to one ComfyUI server: every request has a timeout, a caller's abort rejects with the
 * caller's reason, and a server that does not answer becomes ServerUnavailableError naming it.
 *
 * Requests go through node:http on kept-alive connections rather than fetch: a task makes several
 * requests (submit, view, sometimes upload), and on a busy gateway fetch's web-stream machinery
 * cost more CPU than everything else the client does together.
 */

export interface SendOptions {
  readonly json?: unknown;
  readonly form?: FormData;
  readonly signal?: AbortSignal | undefined;
}

export class ComfyHttp {
  private readonly agent: http.Agent;

  constructor(
    private readonly base: URL,
    /** The server's name in error messages. */
    readonly server: string,
    private readonly timeoutMs: number,
  ) {
    const Agent = base.protocol === 'https:' ? https.Agent : http.Agent;
    // Idle connections close after 4 s, long before a server drops them (aiohttp waits 75 s), so a
    // request never goes out on a connection the server is closing.
    this.agent = new Agent({ keepAlive: true, timeout: 4_000 });
  }

  /** The server's answer with its body read, whatever its status. */
  async send(
    method: string,
    path: string,
    options: SendOptions = {},
  ): Promise<{ status: number; body: Buffer }> {
    options.signal?.throwIfAborted();
    const headers: Record<string, string | number> = {};
    let body: Buffer | undefined;
    if (options.json !== undefined) {
      body = Buffer.from(JSON.stringify(options.json));
      headers['content-type'] = 'application/json';
    } else if (options.form) {
      // The platform's own multipart encoding, boundary and all.
      const encoded = new Response(options.form);
      headers['content-type'] = encoded.headers.get('content-type')!;
      body = Buffer.from(await encoded.arrayBuffer());
    }
    if (body) headers['content-length'] = body.length;
    const url = new URL(path.replace(/^\//, ''), this.base);
    let timedOut = false;
    let reused = false;
    const attempt = () =>
      new Promise<{ status: number; body: Buffer }>((resolve, reject) => {
        const request = (url.protocol === 'https:' ? https : http).request(
          url,
          { method, headers, agent: this.agent },
          (response) => {
            const chunks: Buffer[] = [];
            response.on('data', (chunk: Buffer) => chunks.push(chunk));
            response.on('end', () =>
              resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks) }),
            );
            response.on('error', reject);
            response.on('close', () => {
              if (!response.complete) reject(new Error('the connection closed before the whole answer came'));
            });
          },
        );
        const timer = setTimeout(() => {
          timedOut = true;
          request.destroy(new Error('timed out'));
        }, this.timeoutMs);
        const onAbort = () => request.destroy(options.signal!.reason as Error);
        options.signal?.addEventListener('abort', onAbort, { once: true });
        request.on('close', () => {
          clearTimeout(timer);
          options.signal?.removeEventListener('abort', onAbort);
        });
        request.on('error', (error) => {
          reused = request.reusedSocket;
          reject(error);
        });
        request.end(body);
      });
    try {
      try {
        return await attempt();
      } catch (error) {
        // A kept-alive connection the server dropped while it sat idle (a killed process resets
        // them all) says nothing about the server now: a read goes once more on a new connection,
        // which a dead server refuses at once. Writes are not repeated.
        if (!reused || timedOut || method !== 'GET' || options.signal?.aborted) throw error;
        reused = false;
        return await attempt();
      }
    } catch (error) {
      options.signal?.throwIfAborted();
      if (timedOut) {
        throw new ServerUnavailableError(
          `server ${this.server} did not answer ${method} ${path} within ${this.timeoutMs / 1000} s`,
        );
      }
      const reason = reasonOf(error);
      // Nothing listens on the port: the process is gone, which no retry in a moment changes.
      const Unreachable = reason === 'ECONNREFUSED' ? ServerRefusedError : ServerUnavailableError;
      throw new Unreachable(`server ${this.server} is unreachable (${reason})`);
    }
  }

  /** Closes the kept-alive connections. */
  close(): void {
    this.agent.destroy();
  }

  /** A 2xx answer's JSON body; any other answer means the server is not a working ComfyUI. */
  async json<T>(method: string, path: string, options: SendOptions = {}): Promise<T> {
    const { status, body } = await this.send(method, path, options);
    if (status < 200 || status >= 300) throw this.unexpected(status, method, path);
    return parseJson<T>(body, `${method} ${path}`, this.server);
  }

  /** An answer no working ComfyUI gives to this request. */
  unexpected(status: number, method: string, path: string): ServerUnavailableError {
    return new ServerUnavailableError(`server ${this.server} answered ${status} to ${method} ${path}`);
  }
}

export function parseJson<T>(body: Buffer, what: string, server: string): T {
  try {
    return JSON.parse(body.toString('utf8')) as T;
  } catch {
    throw new ServerUnavailableError(`server ${server} answered ${what} with a body that is not JSON`);
  }
}

function reasonOf(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? (error as Error).message;
}
