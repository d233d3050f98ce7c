import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, startApiHarness } from '../support/api-harness.ts';

/** A GET whose Host header the test chooses (fetch writes its own). */
function getWithHost(
  url: string,
  path: string,
  host: string,
): Promise<{ status: number; location?: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const request = httpRequest({ hostname, port, path, headers: { host }, setHost: false }, (response) => {
      response.resume();
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, location: response.headers.location ?? '' }),
      );
    });
    request.on('error', reject);
    request.end();
  });
}

describe('paths that differ from a route by a trailing slash, answered as FastAPI answers them', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApiHarness();
  });
  afterAll(() => api.close());

  const manual = (path: string, init: RequestInit = {}) =>
    fetch(`${api.url}${path}`, { ...init, redirect: 'manual' });

  it('answers POST /load_model/v1/ with a 307 to /load_model/v1: empty body, absolute Location', async () => {
    const response = await manual('/load_model/v1/', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(response.status).toBe(307);
    expect(response.headers.get('location')).toBe(`${api.url}/load_model/v1`);
    expect(response.headers.get('content-length')).toBe('0');
    expect(await response.text()).toBe('');
    // Redirects are answered before the key is read, and carry the headers every answer carries.
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('x-request-id')).toBeTruthy();
  });

  it('lets a client that follows the 307 submit to the route, with the same method and body', async () => {
    const response = await fetch(`${api.url}/load_model/v1/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'API-Key': api.alice.key },
      body: JSON.stringify(api.example('/load_model/v1')),
    });
    expect(response.status).toBe(200);
    expect(response.url).toBe(`${api.url}/load_model/v1`);
    expect(await response.json()).toMatchObject({ status: 'PENDING' });
  });

  it('keeps the query string, and redirects GET and every other method alike', async () => {
    const tasks = await manual('/tasks/v1/?status=running&limit=1');
    expect(tasks.status).toBe(307);
    expect(tasks.headers.get('location')).toBe(`${api.url}/tasks/v1?status=running&limit=1`);
    // Starlette redirects whenever the other form is a route for some method: the follow-up
    // answers what that route answers for this method.
    const get = await manual('/load_model/v1/');
    expect([get.status, get.headers.get('location')]).toEqual([307, `${api.url}/load_model/v1`]);
    const remove = await manual('/models/v1/m-1/', { method: 'DELETE' });
    expect([remove.status, remove.headers.get('location')]).toEqual([307, `${api.url}/models/v1/m-1`]);
  });

  it('strips every trailing slash, and writes the Location as Starlette quotes it', async () => {
    const slashes = await manual('/openapi.json///');
    expect([slashes.status, slashes.headers.get('location')]).toEqual([307, `${api.url}/openapi.json`]);
    const escaped = await manual('/batches/v1/a%20b%C3%A9/?q=x%20y');
    expect(escaped.headers.get('location')).toBe(`${api.url}/batches/v1/a%20b%C3%A9?q=x%20y`);
  });

  it('reads a {name} parameter as one non-empty segment: /models/v1/ redirects to /models/v1', async () => {
    const list = await manual('/models/v1/');
    expect([list.status, list.headers.get('location')]).toEqual([307, `${api.url}/models/v1`]);
    // A decoded %2F is no segment either: the path is /models/v1// for FastAPI.
    const encoded = await manual('/models/v1/%2F');
    expect([encoded.status, encoded.headers.get('location')]).toEqual([307, `${api.url}/models/v1`]);
    // No route is /sd/text2image/v1/status: an empty task id is a plain 404.
    const status = await api.request('GET', '/sd/text2image/v1/status/');
    expect([status.status, status.body]).toEqual([404, { detail: 'Not Found' }]);
  });

  it('builds the Location from the Host header the client sent', async () => {
    const answer = await getWithHost(api.url, '/health/?verbose=1', 'api.example.com:8443');
    expect(answer).toEqual({ status: 307, location: 'http://api.example.com:8443/health?verbose=1' });
  });

  it('answers the 404 it always answered where the other form is no route, and never redirects /', async () => {
    for (const [method, path] of [
      ['GET', '/no/such/path'],
      ['GET', '/no/such/path/'],
      ['POST', '/sd/text2image/v2/'],
      ['GET', '/'],
      ['GET', '//'],
      ['GET', '/sd/text2image/v1'],
    ] as const) {
      const response = await manual(path, { method });
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(await response.json(), `${method} ${path}`).toEqual({ detail: 'Not Found' });
    }
  });
});
