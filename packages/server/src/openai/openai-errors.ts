import type { FastifyError, FastifyInstance } from 'fastify';
import { type BodyLimits, describeFastifyError, HttpError } from '../http/http-errors.ts';

/**
 * Errors as OpenAI's API writes them, `{"error": {"message", "type", "param", "code"}}`, with its
 * status codes, so OpenAI's SDKs raise their own error classes (AuthenticationError,
 * RateLimitError...) with the message, and every other client shows the message.
 */

export type OpenAiErrorType = 'invalid_request_error' | 'rate_limit_exceeded' | 'server_error' | 'timeout';

export class OpenAiError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    readonly type: OpenAiErrorType,
    readonly param: string | null = null,
    readonly code: string | null = null,
    /** Sent with the answer: `retry-after` with a 429; `x-should-retry: false` where a retry would run the task again. */
    readonly headers?: Readonly<Record<string, string>>,
  ) {
    super(message);
  }

  get body(): { error: { message: string; type: string; param: string | null; code: string | null } } {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

/** A request the API refuses as it stands: 400 at `param`. */
export function invalidRequest(message: string, param: string | null, code: string | null = 'invalid_value') {
  return new OpenAiError(400, message, 'invalid_request_error', param, code);
}

/** What a key refusal says in OpenAI's words (the API-Key hook throws HttpError 401 or 429). */
const MISSING_KEY =
  "You didn't provide an API key: send it as Authorization: Bearer <key> (or in the API-Key header).";

/** The same errors as the rest of the API answers, put in OpenAI's shape. */
export function asOpenAiError(error: FastifyError, limits: BodyLimits): OpenAiError | undefined {
  if (error instanceof OpenAiError) return error;
  if (error instanceof HttpError) {
    const message = typeof error.detail === 'string' ? error.detail : error.message;
    if (error.statusCode === 401) {
      const missing = message.startsWith('Missing API key');
      return new OpenAiError(
        401,
        missing ? MISSING_KEY : 'Incorrect API key provided.',
        'invalid_request_error',
        null,
        missing ? null : 'invalid_api_key',
      );
    }
    if (error.statusCode === 429) {
      return new OpenAiError(429, message, 'rate_limit_exceeded', null, 'rate_limit_exceeded', error.headers);
    }
    return new OpenAiError(error.statusCode, message, 'invalid_request_error');
  }
  const known = describeFastifyError(error, limits);
  if (known) return new OpenAiError(known[0], known[1], 'invalid_request_error');
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) return new OpenAiError(status, error.message, 'invalid_request_error');
  return undefined;
}

/**
 * The scope's error and not-found handlers: every answer of the OpenAI paths is OpenAI-shaped,
 * an unknown path under them too (`Invalid URL (POST /v1/images/variations)`, as OpenAI says it).
 */
export function answerOpenAiErrors(scope: FastifyInstance, limits: BodyLimits): void {
  scope.setErrorHandler((error: FastifyError, request, reply) => {
    const known = asOpenAiError(error, limits);
    if (known) {
      if (known.headers) reply.headers(known.headers);
      return reply.code(known.statusCode).send(known.body);
    }
    request.log.error({ err: error }, 'request failed');
    return reply
      .code(500)
      .send(new OpenAiError(500, 'The server had an error processing your request.', 'server_error').body);
  });
  scope.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0];
    const error = new OpenAiError(404, `Invalid URL (${request.method} ${path})`, 'invalid_request_error');
    return reply.code(404).send(error.body);
  });
}
