import type { FastifyReply, FastifyRequest } from 'fastify';
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
 * client cannot make the server read (or parse) a large body.
 */
export function apiKeyHook(authenticator: Authenticator) {
  return async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const header = request.headers['api-key'];
    const key = Array.isArray(header) ? header[0] : header;
    if (!key) throw new HttpError(401, 'Missing API key: send it in the API-Key header');
    const caller = await authenticator.authenticate(key.trim());
    if (!caller) throw new HttpError(401, 'Invalid API key');
    request.caller = caller;
  };
}
