import { expect } from 'vitest';

/**
 * Plain HTTP calls to a running API with an owner's key, as a client makes them: `call` answers
 * status and JSON body, `submit` a task's id (asserting 200), `settle` polls its status until it
 * is no longer PENDING (60 s at most).
 */
export function apiCalls(baseUrl: () => string) {
  const call = async (method: string, route: string, key: string, json?: unknown) => {
    const response = await fetch(`${baseUrl()}${route}`, {
      method,
      headers: { 'API-Key': key, ...(json ? { 'content-type': 'application/json' } : {}) },
      ...(json ? { body: JSON.stringify(json) } : {}),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const submit = async (pipeline: string, body: Record<string, unknown>, key: string): Promise<string> => {
    const submitted = await call('POST', pipeline, key, body);
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
    return String(submitted.body.id);
  };
  const settle = async (pipeline: string, id: string, key: string): Promise<Record<string, unknown>> => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const { status, body } = await call('GET', `${pipeline}/status/${id}`, key);
      expect(status).toBe(200);
      if (body.status !== 'PENDING') return body;
      if (Date.now() > deadline) throw new Error(`${pipeline} ${id} still pending after 60 s`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  return { call, submit, settle };
}
