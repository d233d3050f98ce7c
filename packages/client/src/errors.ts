import type { ValidationIssue } from './types.ts';

/**
 * What the client throws. Every error is an ImagegenError; `instanceof` tells them apart:
 *
 * - ApiError: the API answered an error status (404, 409, 429, 5xx...); `status`, `detail`.
 * - ValidationError (an ApiError, 422): the request did not validate; `issues` lists each problem.
 * - AuthError (an ApiError, 401 or 403): the key is missing, unknown, or not allowed this request.
 * - NetworkError: no answer came (connection refused or dropped, DNS), after the retries.
 * - TaskFailedError: the task ran and ended in failure; `message` is the task's error text.
 * - TimeoutError: the deadline (`timeoutMs`) passed; `cancelled` says whether the task was cancelled.
 * - WebhookVerificationError: a webhook's signature, timestamp or headers do not hold.
 *
 * A caller's own `signal` aborting rejects with the signal's reason, as fetch does.
 */
export class ImagegenError extends Error {
  override name = 'ImagegenError';
}

export class ApiError extends ImagegenError {
  override name = 'ApiError';
  constructor(
    /** The HTTP status. */
    readonly status: number,
    /** The answer's `detail` (a text, or the 422 list), or its body when it had none. */
    readonly detail: unknown,
    /** `METHOD /path` of the request. */
    readonly request: string,
  ) {
    super(`${request}: HTTP ${status}: ${typeof detail === 'string' ? detail : JSON.stringify(detail)}`);
  }
}

export class ValidationError extends ApiError {
  override name = 'ValidationError';
  constructor(
    readonly issues: readonly ValidationIssue[],
    request: string,
  ) {
    super(422, issues, request);
    this.message = `${request}: the request did not validate: ${issues.map(describeIssue).join('; ')}`;
  }
}

/** `body.samples: ensure this value is less than or equal to 4`: where, then what. */
export function describeIssue(issue: ValidationIssue): string {
  return `${issue.loc.join('.')}: ${issue.msg}`;
}

export class AuthError extends ApiError {
  override name = 'AuthError';
}

export class NetworkError extends ImagegenError {
  override name = 'NetworkError';
  constructor(request: string, options: { cause: unknown }) {
    super(`${request}: no answer from the API (${causeText(options.cause)})`, options);
  }
}

function causeText(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  const inner = (cause as { cause?: unknown }).cause;
  return inner instanceof Error ? `${cause.message}: ${inner.message}` : cause.message;
}

export class TaskFailedError extends ImagegenError {
  override name = 'TaskFailedError';
  constructor(
    /** The task's id. */
    readonly taskId: string,
    /** The final status the API answered: `{status: "FAILURE", error}` (training: `failed`). */
    readonly status: { status: string; error: string },
  ) {
    super(status.error);
  }
}

export class TimeoutError extends ImagegenError {
  override name = 'TimeoutError';
  constructor(
    /** The task's id, when the submission was answered before the deadline. */
    readonly taskId: string | undefined,
    readonly timeoutMs: number,
    /** True when the task was cancelled because the deadline passed (`cancelOnTimeout`). */
    readonly cancelled: boolean,
  ) {
    const what = taskId ? `task ${taskId}` : 'the submission';
    super(`${what} did not end within ${timeoutMs} ms${cancelled ? '; it was cancelled' : ''}`);
  }
}

export class WebhookVerificationError extends ImagegenError {
  override name = 'WebhookVerificationError';
}
