import { describe, expect, it } from 'vitest';
import { readStartConfig } from '../../src/cli/start-config.ts';

describe('the settings npm start reads', () => {
  it('runs every role, with the pool sizes and grace period of one process, unless told otherwise', () => {
    const config = readStartConfig({});
    expect([...config.roles]).toEqual(['api', 'worker', 'webhooks', 'docs']);
    expect(config).toMatchObject({
      poolSize: 20,
      workerPoolSize: 6,
      shutdownGraceMs: 10_000,
      healthPort: 8001,
    });
  });

  it('runs the roles IMAGEGEN_ROLES lists, spaces and empty entries aside', () => {
    expect([...readStartConfig({ IMAGEGEN_ROLES: ' worker , webhooks,' }).roles]).toEqual([
      'worker',
      'webhooks',
    ]);
    expect([...readStartConfig({ IMAGEGEN_ROLES: 'api' }).roles]).toEqual(['api']);
  });

  it('reads the pool sizes, the grace period and the health port', () => {
    const config = readStartConfig({
      DATABASE_POOL_SIZE: '8',
      WORKER_POOL_SIZE: '3',
      SHUTDOWN_GRACE_MS: '0',
      HEALTH_PORT: '9100',
    });
    expect(config).toMatchObject({ poolSize: 8, workerPoolSize: 3, shutdownGraceMs: 0, healthPort: 9100 });
  });

  it('keeps records for the retention defaults, or the days the settings give, 0 for ever', () => {
    expect(readStartConfig({})).toMatchObject({
      retention: { outputs: 30, uploads: 7, tasks: 30, webhookAttempts: 30, analytics: 90, usage: 400 },
      retentionSweepMs: 600_000,
    });
    const config = readStartConfig({
      RETENTION_OUTPUTS_DAYS: '0',
      RETENTION_UPLOADS_DAYS: '1',
      RETENTION_TASKS_DAYS: '365',
      RETENTION_WEBHOOK_ATTEMPTS_DAYS: '0',
      RETENTION_ANALYTICS_DAYS: '14',
      RETENTION_USAGE_DAYS: '0',
      RETENTION_SWEEP_SECONDS: '60',
    });
    expect(config).toMatchObject({
      retention: { outputs: null, uploads: 1, tasks: 365, webhookAttempts: null, analytics: 14, usage: null },
      retentionSweepMs: 60_000,
    });
  });

  it.each([
    [
      { RETENTION_OUTPUTS_DAYS: '30d' },
      'RETENTION_OUTPUTS_DAYS=30d is not a number of days: a whole number, or 0 to keep forever',
    ],
    [
      { RETENTION_TASKS_DAYS: '-1' },
      'RETENTION_TASKS_DAYS=-1 is not a number of days: a whole number, or 0 to keep forever',
    ],
    [
      { RETENTION_UPLOADS_DAYS: 'off' },
      'RETENTION_UPLOADS_DAYS=off is not a number of days: a whole number, or 0 to keep forever',
    ],
    [{ RETENTION_SWEEP_SECONDS: '0' }, 'RETENTION_SWEEP_SECONDS=0 is not a whole number from 1'],
    [
      { IMAGEGEN_ROLES: 'api,gpu' },
      'IMAGEGEN_ROLES names unknown role "gpu"; roles: api, worker, webhooks, docs',
    ],
    [{ DATABASE_POOL_SIZE: '0' }, 'DATABASE_POOL_SIZE=0 is not a whole number from 1'],
    [{ WORKER_POOL_SIZE: '1' }, 'WORKER_POOL_SIZE=1 is not a whole number from 2'],
    [{ SHUTDOWN_GRACE_MS: '1.5' }, 'SHUTDOWN_GRACE_MS=1.5 is not a whole number from 0'],
    [{ HEALTH_PORT: '70000' }, 'HEALTH_PORT=70000 is not a port number'],
  ])('refuses %j with a clear message', (env, message) => {
    expect(() => readStartConfig(env)).toThrow(message);
  });
});
