import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { Authenticator, Caller } from '../auth/authenticator.ts';
import { HttpError } from './http-errors.ts';

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller | null;
  }
}

/** The caller of an authenticated route (set by the onRequest hook below). */
export function callerOf(request: FastifyRequest): Caller {
  if (!request.caller) throw new HttpError(401, 'Missing API key: send it in the API-Key header');
  return request.caller;
}

/**
 * onRequest hook for authenticated routes: runs before the body is read, so an unauthenticated
 * client cannot make the server read (or parse) a large body. Callback style, so a cached key
 * (nearly every request of a busy client) costs no promise at all.
 */
export function apiKeyHook(authenticator: Authenticator) {
  return (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    const header = request.headers['api-key'];
    const key = (Array.isArray(header) ? header[0] : header)?.trim();
    if (!key) {
      done(new HttpError(401, 'Missing API key: send it in the API-Key header'));
      return;
    }
    const hit = authenticator.cached(key);
    if (hit) {
      request.caller = hit;
      done();
      return;
    }
    authenticator.authenticate(key).then((caller) => {
      if (caller) request.caller = caller;
      done(caller ? undefined : new HttpError(401, 'Invalid API key'));
    }, done);
  };
}
