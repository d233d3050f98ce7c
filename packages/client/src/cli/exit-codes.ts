/** What `imagegen` exits with; the docs' Client libraries page lists them. */
export const EXIT = {
  /** The task succeeded (or the command did what it was asked). */
  ok: 0,
  /** The task failed or was cancelled; `webhook verify`: the webhook does not verify. */
  failed: 1,
  /** Bad input: an unknown flag or pipeline, a missing file, or a body the API refused (422). */
  badInput: 2,
  /** The deadline (`--timeout`) passed before the task ended. */
  timeout: 3,
  /** The API could not be used: unreachable, the key refused (401, 403), or another HTTP error. */
  unavailable: 4,
  /** Interrupted (Ctrl-C): the task was cancelled. */
  interrupted: 130,
} as const;

/** A mistake in the command line itself: the message says what, and the command exits 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}
