/** Polls `url` one GET at a time, 20 ms apart, until stopped; stop() answers the slowest answer's time in ms. */
export function pollSlowest(url: string): { stop(): Promise<number> } {
  let running = true;
  let slowest = 0;
  const done = (async () => {
    while (running) {
      const start = performance.now();
      await (await fetch(url)).arrayBuffer();
      slowest = Math.max(slowest, performance.now() - start);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  return {
    async stop() {
      running = false;
      await done;
      return Math.round(slowest);
    },
  };
}
