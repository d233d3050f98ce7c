import { ServerUnavailableError } from '../contracts.ts';

/**
 * HTTP to one ComfyUI server: every request has a timeout, a caller's abort rejects with the
 * caller's reason, and a server that does not answer becomes ServerUnavailableError naming it.
 */

export interface SendOptions {
  readonly json?: unknown;
  readonly form?: FormData;
  readonly signal?: AbortSignal | undefined;
}

export class ComfyHttp {
  constructor(
    private readonly base: URL,
    /** The server's name in error messages. */
    readonly server: string,
    private readonly timeoutMs: number,
  ) {}

  /** The server's answer with its body read, whatever its status. */
  async send(
    method: string,
    path: string,
    options: SendOptions = {},
  ): Promise<{ status: number; body: Buffer }> {
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    const init: RequestInit = { method, signal };
    if (options.json !== undefined) {
      init.body = JSON.stringify(options.json);
      init.headers = { 'content-type': 'application/json' };
    } else if (options.form) {
      init.body = options.form;
    }
    try {
      const response = await fetch(new URL(path.replace(/^\//, ''), this.base), init);
      return { status: response.status, body: Buffer.from(await response.arrayBuffer()) };
    } catch (error) {
      options.signal?.throwIfAborted();
      if (timeout.aborted) {
        throw new ServerUnavailableError(
          `server ${this.server} did not answer ${method} ${path} within ${this.timeoutMs / 1000} s`,
        );
      }
      throw new ServerUnavailableError(`server ${this.server} is unreachable (${reasonOf(error)})`);
    }
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
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message;
}
