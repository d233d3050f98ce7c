import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { RequestDurations } from '../../src/observability/request-durations.ts';

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** prom-client's Histogram and ours, fed the same observations, each in its own registry. */
function both() {
  const theirs = new Registry();
  const ours = new Registry();
  const histogram = new Histogram({
    name: 'imagegen_http_request_duration_seconds',
    help: 'API requests by method, route pattern and status, and how long they took to answer',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: BUCKETS,
    registers: [theirs],
  });
  const durations = new RequestDurations(
    'imagegen_http_request_duration_seconds',
    'API requests by method, route pattern and status, and how long they took to answer',
    BUCKETS,
    ours,
  );
  const observe = (method: string, route: string, status: number, seconds: number) => {
    histogram.observe({ method, route, status: String(status) }, seconds);
    durations.observe(method, route, status, seconds);
  };
  return { theirs, ours, observe, histogram, durations };
}

describe('the request latency histogram', () => {
  it('writes the exposition text and JSON prom-client writes for the same observations', async () => {
    const { theirs, ours, observe } = both();
    observe('POST', '/sd/text2image/v1', 200, 0.003);
    observe('GET', '/sd/text2image/v1/status/:task_id', 200, 0.0101);
    observe('POST', '/sd/text2image/v1', 200, 0.2);
    observe('GET', '(unmatched)', 404, 0.001);
    observe('POST', '/sd/text2image/v1', 422, 75);
    observe('GET', '/files/*', 200, 0.01);
    observe('GET', 'a "quoted"\\route\nname', 200, 5);
    observe('POST', '/sd/text2image/v1', 200, 0.025);
    expect(await ours.metrics()).toBe(await theirs.metrics());
    expect(await ours.getMetricsAsJSON()).toEqual(await theirs.getMetricsAsJSON());
  });

  it('starts over when reset, as the registry resets it', async () => {
    const { theirs, ours, observe } = both();
    observe('GET', '/health', 200, 0.001);
    theirs.resetMetrics();
    ours.resetMetrics();
    expect(await ours.metrics()).toBe(await theirs.metrics());
    observe('GET', '/health', 503, 0.02);
    expect(await ours.metrics()).toBe(await theirs.metrics());
  });
});
