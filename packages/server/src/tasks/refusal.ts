/**
 * A submission the tasks module refuses before queueing anything; `status` is the HTTP status
 * the API answers with, `message` its detail.
 */
export class SubmitRefusedError extends Error {
  constructor(
    readonly status: 403 | 404 | 409,
    message: string,
  ) {
    super(message);
  }
}
