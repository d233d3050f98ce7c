import { serveThread } from '@imagegen/engines/threads';

/**
 * A worker thread that blocks for as long as asked, as a model pass does: nothing on it can
 * interrupt the wait (the attempt-phase tests' engine runs its jobs here).
 */
serveThread<{ ms: number }, number>(({ ms }) => {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
  return ms;
});
