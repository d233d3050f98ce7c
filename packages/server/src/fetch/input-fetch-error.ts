/** The task's owner reads this message as the task's error: it names the field and the reason. */
export class InputFetchError extends Error {
  override readonly name = 'InputFetchError';
  constructor(
    readonly field: string,
    readonly reason: string,
    /** The image host timed out, failed or answered 5xx/429: a later attempt may succeed. */
    readonly transient = false,
  ) {
    super(`${field}: ${reason}`);
  }
}
