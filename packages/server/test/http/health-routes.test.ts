import { describe, expect, it } from 'vitest';
import { buildHealthApp } from '../../src/http/health-app.ts';
import type { Readiness } from '../../src/http/routes/health.ts';

describe('liveness and readiness', () => {
  it('is ready when every role is, and says which role is not', async () => {
    let engines = false;
    const readiness: Readiness = {
      stopping: false,
      checks: {
        worker: async () => {
          if (!engines) throw new Error('no engine loaded');
        },
        webhooks: async () => {},
      },
    };
    const app = buildHealthApp(readiness);
    const unready = await app.inject('/health/ready');
    expect(unready.statusCode).toBe(503);
    expect(unready.json()).toEqual({
      status: 'unready',
      roles: { worker: 'no engine loaded', webhooks: 'ready' },
    });
    engines = true;
    const ready = await app.inject('/health/ready');
    expect(ready.statusCode).toBe(200);
    expect(ready.headers['cache-control']).toBe('no-store');
    expect(ready.json()).toEqual({ status: 'ready', roles: { worker: 'ready', webhooks: 'ready' } });
    await app.close();
  });

  it('turns unready while it shuts down, and stays live', async () => {
    const readiness: Readiness = { stopping: false, checks: { api: async () => {} } };
    const app = buildHealthApp(readiness);
    readiness.stopping = true;
    const ready = await app.inject('/health/ready');
    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toEqual({ status: 'unready', roles: { api: 'shutting down' } });
    const live = await app.inject('/health/live');
    expect(live.statusCode).toBe(200);
    expect(live.json()).toEqual({ status: 'live' });
    await app.close();
  });
});
