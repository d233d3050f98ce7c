/**
 * Every hook a submission (`POST /sd/text2image/v1` and its kin) and a status read pass through,
 * by Fastify lifecycle stage, in order: the hot path's budget table. Its CPU budget, measured by
 * `npm run --silent bench -- api` (`cpu_us_per_request.*.server`, on a quiet machine), is
 * HOT_PATH_BUDGET_US. A test compares this table with the hooks the built API really runs, so a
 * feature that adds a step to every request names it here, with what it costs, on purpose; a
 * feature that serves some requests only belongs in its route (or behind a cheap check), not in a
 * global hook.
 *
 * Where the time of a request went, by step (`BENCH_CPU_PROF`, bench/profile-summary.ts): for a
 * submission, writing the answer about a third of the samples (most of it the wait after a
 * loopback write wakes the client: perf counts the kernel at about a tenth of the CPU), PostgreSQL's
 * client and the SQL operations a fifth, reading the body a seventh, and validation, routing,
 * these hooks, metrics and the request id a few percent each. bench/hot-path-profile.md has the
 * table, step by step, and what is left between these figures and the budget.
 */
export const HOT_PATH_HOOKS = {
  onRequest: [
    // request-bodies.ts: a body of a Content-Type Fastify does not route is kept for the contract's reader.
    'standInContentType',
    // api-app.ts: three headers (CORS for the docs site, the request id).
    'corsAndRequestId',
    // slash-redirects.ts: a path parameter holding `/` is not that route (as Starlette routes it).
    'refuseSlashInParams',
    // api-key-auth.ts: the key, from the in-process cache after the first request.
    'authenticate',
  ],
  // api-app.ts: `connection: close` once the server is closing.
  onSend: ['closeWhenClosing'],
  // observability/http-observer.ts: the latency histogram and the request's log line.
  onResponse: ['observeRequest'],
} as const;

/** Server CPU per request the hot path may cost, in µs (`bench -- api`, median of 3 quiet runs). */
export const HOT_PATH_BUDGET_US = { submit: 50, status: 30 } as const;
