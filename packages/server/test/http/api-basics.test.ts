import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildOpenApi } from '@imagegen/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthenticator } from '../../src/auth/authenticator.ts';
import { buildApiRole } from '../../src/http/api-role.ts';
import { LocalBlobStore } from '../../src/storage/local-blob-store.ts';
import { type ApiHarness, startApiHarness } from '../support/api-harness.ts';

describe('the API over HTTP: keys, health, openapi.json', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApiHarness();
  });
  afterAll(() => api.close());

  it('answers 401 with a JSON detail when the API-Key header is missing', async () => {
    const response = await api.request('POST', '/sd/text2image/v1', {
      key: null,
      json: { prompt: 'a', negative_prompt: '' },
    });
    expect(response.status).toBe(401);
    expect(response.body).toEqual({ detail: 'Missing API key: send it in the API-Key header' });
  });

  it('answers 401 with a JSON detail for a wrong key, on submit and status alike', async () => {
    const wrong = 'ig_0123456789abcdefghijABCDEFGHIJ01';
    const submit = await api.request('POST', '/sd/text2image/v1', { key: wrong, json: { prompt: 'a' } });
    const status = await api.request('GET', '/sd/text2image/v1/status/00000000-0000-0000-0000-000000000000', {
      key: wrong,
    });
    expect([submit.status, status.status]).toEqual([401, 401]);
    expect(submit.body).toEqual({ detail: 'Invalid API key' });
    expect(status.body).toEqual({ detail: 'Invalid API key' });
  });

  it('does not store the key itself, only its sha256', async () => {
    const { rows } = await api.db.pool.query('SELECT key_hash, prefix FROM api_keys');
    for (const row of rows) {
      expect(row.key_hash).toHaveLength(32);
      expect(row.prefix).toMatch(/^ig_.{4}$/);
    }
    const found = await api.db.pool.query('SELECT 1 FROM api_keys WHERE encode(key_hash, $1) LIKE $2', [
      'escape',
      `%${api.alice.key.slice(3)}%`,
    ]);
    expect(found.rowCount).toBe(0);
  });

  it('serves GET /health without a key, listing the engines and their pipelines', async () => {
    const response = await api.request('GET', '/health', { key: null });
    expect(response.status).toBe(200);
    const body = response.body as { status: string; engines: { name: string; pipelines: string[] }[] };
    expect(body.status).toBe('ok');
    expect(body.engines[0]?.name).toBe('plain');
    expect(body.engines[0]?.pipelines).toContain('/sd/text2image/v1');
  });

  it('serves GET /openapi.json: OpenAPI 3.1.0 naming this server, readable from another origin', async () => {
    const response = await api.request('GET', '/openapi.json', { key: null });
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    const doc = response.body as {
      openapi: string;
      paths: Record<string, unknown>;
      servers?: { url: string }[];
    };
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toContain('/sd/text2image/v1/status/{task_id}');
    expect(JSON.stringify(doc.servers ?? [])).toContain(api.url);
  });

  it('appends to /openapi.json the notes it is handed, those of the engines its process serves', async () => {
    const notes = {
      pipelines: { '/bgremover/v1': 'Engine X cuts with model Y.' },
      fields: { safety_checker: 'Engine X says unsafe above 0.7.' },
    };
    const { app: noted } = await buildApiRole(
      { publicUrl: 'https://api.example', docsPort: 3000 },
      {},
      {
        pool: api.db.pool,
        authenticator: createAuthenticator(api.db.pool),
        store: new LocalBlobStore(path.join(tmpdir(), 'imagegen-notes-unused')),
        engines: () => [],
        notes,
        readiness: { checks: {}, stopping: false },
      },
    );
    try {
      const served = (await noted.inject({ method: 'GET', url: '/openapi.json' })).json();
      const expected = buildOpenApi({ serverUrl: 'https://api.example', notes });
      expect(served).toEqual(JSON.parse(JSON.stringify(expected)));
      expect(served.paths['/bgremover/v1'].post.description).toContain(
        'offered. Engine X cuts with model Y.',
      );
      const plain = (await api.request('GET', '/openapi.json', { key: null })).body;
      expect(JSON.stringify(plain)).not.toContain('Engine X');
    } finally {
      await noted.close();
    }
  });

  it('answers a CORS preflight for the API-Key header', async () => {
    const response = await api.request('OPTIONS', '/sd/text2image/v1', {
      key: null,
      headers: { origin: 'http://localhost:3000', 'access-control-request-method': 'POST' },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-headers')).toContain('API-Key');
  });

  it('answers an unknown path with a JSON 404', async () => {
    const response = await api.request('GET', '/no/such/path', { key: null });
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ detail: 'Not Found' });
  });
});
