import type { FastifyError, FastifyInstance } from 'fastify';

/**
 * Every error the API answers carries a JSON `detail`, as FastAPI writes it: a list of
 * ValidationError entries for 422, a sentence otherwise. Never a stack trace, never a bare 500
 * for something the client did.
 */
export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    readonly detail: unknown,
    /** Sent with the answer, e.g. `retry-after` with a 429. */
    readonly headers?: Readonly<Record<string, string>>,
  ) {
    super(typeof detail === 'string' ? detail : `HTTP ${statusCode}`);
  }
}

/** An error whose answer body is already written as JSON (a long 422 written off the event loop). */
export class PreparedHttpError extends HttpError {
  constructor(
    statusCode: number,
    readonly json: Uint8Array,
  ) {
    super(statusCode, undefined);
  }
}

export const TASK_NOT_FOUND = 'Task not found';
/** What the original service answers, with status 400, for a multipart upload without a boundary. */
export const MISSING_BOUNDARY = 'Missing boundary in multipart.';

/** Fastify's own errors, in words a client can act on. */
export function describeFastifyError(error: FastifyError, limits: BodyLimits): [number, string] | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return [413, `Request body is too large: the limit is ${formatBytes(limits.json)}`];
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return [
        415,
        'Unsupported Content-Type: send application/json (or multipart/form-data to upload images)',
      ];
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return [400, 'Content-Length does not match the body received'];
    case 'FST_REQ_FILE_TOO_LARGE':
      return [413, `An uploaded file is too large: each image may be at most ${formatBytes(limits.image)}`];
    case 'FST_FILES_LIMIT':
    case 'FST_PARTS_LIMIT':
      return [413, 'Too many parts in the upload'];
    default:
      return undefined;
  }
}

function formatBytes(bytes: number): string {
  return bytes >= 1 << 20 ? `${Math.round(bytes / (1 << 20))} MiB` : `${Math.round(bytes / 1024)} KiB`;
}

/** The size limits the error messages quote, in bytes. */
export interface BodyLimits {
  /** A JSON request body. */
  readonly json: number;
  /** One uploaded image. */
  readonly image: number;
}

export function installErrorHandlers(app: FastifyInstance, limits: BodyLimits): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof PreparedHttpError) {
      const { json } = error;
      return reply
        .code(error.statusCode)
        .type('application/json; charset=utf-8')
        .send(Buffer.from(json.buffer, json.byteOffset, json.byteLength));
    }
    if (error instanceof HttpError) {
      if (error.headers) reply.headers(error.headers);
      return reply.code(error.statusCode).send({ detail: error.detail });
    }
    const known = describeFastifyError(error, limits);
    if (known) return reply.code(known[0]).send({ detail: known[1] });
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) return reply.code(status).send({ detail: error.message });
    request.log.error({ err: error }, 'request failed');
    return reply.code(500).send({ detail: 'Internal server error' });
  });
}
