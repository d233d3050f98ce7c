import type { FastifyReply, FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import type { Authenticator, Caller } from '../../src/auth/authenticator.ts';
import { apiKeyHook } from '../../src/http/api-key-auth.ts';

const ALICE: Caller = { ownerId: 'alice', name: 'alice', plan: 'BASIC', enterprise: false };

/** An authenticator whose lookups take a few milliseconds and are counted; nothing is cached. */
function slowAuthenticator(known: Map<string, Caller>) {
  let lookups = 0;
  const authenticator: Authenticator = {
    cached: () => undefined,
    async authenticate(key) {
      lookups++;
      // What the database held when the lookup started, answered a few milliseconds later.
      const found = known.get(key) ?? null;
      await new Promise((resolve) => setTimeout(resolve, 5));
      return found;
    },
    clear() {},
  };
  return { authenticator, lookups: () => lookups };
}

/** Runs the hook for a request carrying `key`; resolves with the caller or the error it answered. */
function authenticate(hook: ReturnType<typeof apiKeyHook>, key: string) {
  const request = { headers: { 'api-key': key }, caller: null } as unknown as FastifyRequest;
  return new Promise<Caller | Error>((resolve) => {
    hook(request, {} as FastifyReply, (error?: Error) => resolve(error ?? request.caller!));
  });
}

describe('the API key hook', () => {
  it('looks a key up once for all the requests that arrive while it is being looked up', async () => {
    const { authenticator, lookups } = slowAuthenticator(new Map([['ig_alice', ALICE]]));
    const hook = apiKeyHook(authenticator);
    const callers = await Promise.all(Array.from({ length: 64 }, () => authenticate(hook, 'ig_alice')));
    expect(callers.every((caller) => caller === ALICE)).toBe(true);
    expect(lookups()).toBe(1);
    // The next request after the lookup finished looks again (the authenticator's cache decides).
    await authenticate(hook, 'ig_alice');
    expect(lookups()).toBe(2);
  });

  it('lets each request that shared a lookup finding nothing look for itself', async () => {
    const known = new Map<string, Caller>();
    const { authenticator, lookups } = slowAuthenticator(known);
    const hook = apiKeyHook(authenticator);
    const first = authenticate(hook, 'ig_new');
    // The key is created while the first lookup runs: the request that arrives now must see it.
    known.set('ig_new', ALICE);
    const second = authenticate(hook, 'ig_new');
    expect(await first).toBeInstanceOf(Error);
    expect(await second).toBe(ALICE);
    expect(lookups()).toBe(2);
  });

  it('answers a missing key with 401 without a lookup', async () => {
    const { authenticator, lookups } = slowAuthenticator(new Map());
    const error = await authenticate(apiKeyHook(authenticator), '  ');
    expect(error).toMatchObject({ statusCode: 401 });
    expect(lookups()).toBe(0);
  });
});
