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

  it.each([
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
