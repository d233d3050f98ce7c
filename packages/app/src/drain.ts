/**
 * One part of the process that a drain waits for: its name in the log, its end, and optionally
 * what it is still doing (its open connections, say), added to the log line while it waits.
 */
export type DrainStep = readonly [name: string, done: Promise<unknown> | undefined, doing?: () => string];

/** How often a drain that is still waiting says for what. */
export const DRAIN_REPORT_MS = 10_000;

/**
 * Waits until every step has ended (a failed one is logged, and the drain goes on), and every `reportMs`
 * until then logs the names of the steps still running. A drain can rightly take long (a task
 * finishing its grace period), and one that hangs must say where: an orchestrator's log then
 * shows the step instead of a silence before the kill.
 */
export async function drain(
  steps: readonly DrainStep[],
  log: (line: string) => void,
  reportMs = DRAIN_REPORT_MS,
): Promise<void> {
  const waiting = steps.filter(([, done]) => done !== undefined);
  const pending = new Set(waiting.map((_, at) => at));
  const timer = setInterval(() => {
    const names = waiting
      .filter((_, at) => pending.has(at))
      .map(([name, , doing]) => (doing ? `${name} (${doing()})` : name));
    log(`draining: waiting for ${names.join(', ')}`);
  }, reportMs);
  try {
    await Promise.all(
      waiting.map(([name, done], at) =>
        done!.then(
          () => pending.delete(at),
          (error: Error) => {
            pending.delete(at);
            log(`draining: ${name} failed: ${error.message}`);
          },
        ),
      ),
    );
  } finally {
    clearInterval(timer);
  }
}
