/**
 * The signal a run works under: it aborts when the caller's signal does, or when `timeoutMs`
 * passes (then `timedOut` is true, so the run can answer a TimeoutError rather than an abort).
 */
export interface Deadline {
  readonly signal: AbortSignal;
  readonly timedOut: boolean;
  dispose(): void;
}

export function startDeadline(signal: AbortSignal | undefined, timeoutMs: number | undefined): Deadline {
  const controller = new AbortController();
  let timedOut = false;
  const timer =
    timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          controller.abort(new DOMException(`deadline of ${timeoutMs} ms passed`, 'TimeoutError'));
        }, timeoutMs);
  const forward = () => controller.abort(signal?.reason);
  if (signal?.aborted) forward();
  else signal?.addEventListener('abort', forward, { once: true });
  return {
    signal: controller.signal,
    get timedOut() {
      return timedOut;
    },
    dispose() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', forward);
    },
  };
}
