import { type ComfyClient, ServerUnavailableError } from '../src/contracts.ts';

/**
 * A ComfyClient stand-in for unit tests: health is a switch (`up`), the queue length a number,
 * and every other call is whatever the test gives (or a rejection saying it was not expected).
 */
export interface StandInClient extends ComfyClient {
  up: boolean;
  queueRemaining: number;
  /** Times `stats` was called. */
  checks: number;
}

export function standInClient(name: string, overrides: Partial<ComfyClient> = {}): StandInClient {
  const unexpected = (what: string) => () => Promise.reject(new Error(`${name}: ${what} was not expected`));
  const client: StandInClient = {
    name,
    url: `http://${name}.test:8188`,
    up: true,
    queueRemaining: 0,
    checks: 0,
    async stats() {
      client.checks++;
      if (!client.up) throw new ServerUnavailableError(`${name}: connection refused`);
      return { comfyuiVersion: '0.3.64', queueRemaining: client.queueRemaining };
    },
    objectInfo: unexpected('objectInfo'),
    free: unexpected('free'),
    retake: async () => 0,
    models: unexpected('models'),
    upload: unexpected('upload'),
    run: unexpected('run'),
    view: unexpected('view'),
    close: async () => {},
    ...overrides,
  };
  return client;
}
