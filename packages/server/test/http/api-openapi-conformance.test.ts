import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ApiHarness,
  type ApiResponse,
  startApiHarness,
  withReachableImages,
} from '../support/api-harness.ts';
import {
  type ApiCall,
  type OpenApiDocument,
  type OperationCases,
  requestCases,
  type Schema,
} from '../support/openapi-requests.ts';

/**
 * The API and its /openapi.json cannot disagree: every route the running API registers is a
 * documented operation (method and path), every documented operation is served, and each accepts
 * what its document accepts and refuses with a 422 naming the field what its document refuses.
 */

/**
 * What the API serves beside the contract's operations: the service's own routes (health, the
 * document itself, metrics, files, the CORS preflight), the orchestrator's probes, and the docs
 * site's page-view collector (its origins only, no key), which the program registers for the docs
 * port its settings name.
 */
const SERVICE_ROUTES = [
  'GET /health',
  'GET /health/live',
  'GET /health/ready',
  'GET /openapi.json',
  'GET /metrics',
  'GET /files/*',
  'OPTIONS *',
  'POST /analytics/v1/events',
  'OPTIONS /analytics/v1/events',
];
/**
 * Routes that speak other protocols, as their own specifications write them (OpenAI's Images API,
 * MCP): documented on their pages of the docs site, not in this document.
 */
const PROTOCOL_ROUTES = [
  'GET /v1/models',
  'GET /v1/models/{model}',
  'POST /v1/images/generations',
  'POST /v1/images/edits',
  'OPTIONS /v1/*',
  'POST /mcp',
  'GET /mcp',
  'DELETE /mcp',
  'OPTIONS /mcp',
];

/** A response body short enough for a failure message. */
const brief = (body: unknown) => JSON.stringify(body)?.slice(0, 300);

describe('the served API and the OpenAPI document it serves', () => {
  let api: ApiHarness;
  let doc: OpenApiDocument;
  let cases: OperationCases[];
  let png: Buffer;

  beforeAll(async () => {
    api = await startApiHarness();
    const served = await api.request('GET', '/openapi.json', { key: null });
    expect(served.status).toBe(200);
    doc = served.body as OpenApiDocument;
    cases = requestCases(doc, { imageUrl: `${api.imagesUrl}/photo.png` });
    png = await sharp({ create: { width: 32, height: 24, channels: 3, background: '#4080c0' } })
      .png()
      .toBuffer();
  });
  afterAll(() => api.close());

  function send(call: ApiCall): Promise<ApiResponse> {
    if (call.form) {
      const form = new FormData();
      for (const part of call.form) {
        if ('file' in part)
          form.append(part.name, new Blob([new Uint8Array(png)], { type: 'image/png' }), `${part.name}.png`);
        else form.append(part.name, part.text);
      }
      return api.request(call.method, call.url, { body: form });
    }
    return api.request(call.method, call.url, call.json === undefined ? {} : { json: call.json });
  }

  it('serves every documented operation, and documents every route it serves', () => {
    const served = api.routes
      // HEAD is Fastify's automatic twin of every GET.
      .filter((route) => route.method !== 'HEAD')
      .map((route) => `${route.method} ${route.url.replace(/:(\w+)/g, '{$1}')}`);
    const documented = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(documented.length).toBeGreaterThan(40);
    expect(new Set(served).size, 'a route is registered twice').toBe(served.length);
    expect([...served].sort()).toEqual([...documented, ...SERVICE_ROUTES, ...PROTOCOL_ROUTES].sort());
  });

  it("accepts every operation's valid requests: its example, and that cut to its required fields", {
    timeout: 60_000,
  }, async () => {
    const imageUrl = `${api.imagesUrl}/photo.png`;
    const refused: string[] = [];
    for (const { operation, valid } of cases) {
      for (const each of valid) {
        const call =
          each.json === undefined ? each : { ...each, json: withReachableImages(each.json, imageUrl) };
        const response = await send(call);
        if (response.status === 422 || response.status >= 500) {
          const request = JSON.stringify(call.json ?? call.url);
          refused.push(`${operation} ${request}: ${response.status} ${brief(response.body)}`);
        }
      }
    }
    expect(cases).toHaveLength(Object.values(doc.paths).flatMap((item) => Object.keys(item)).length);
    expect(refused).toEqual([]);
  });

  it('refuses every invalid variant with a 422 whose detail names the field', {
    timeout: 120_000,
  }, async () => {
    const accepted: string[] = [];
    let checked = 0;
    for (const { operation, invalid } of cases) {
      for (const call of invalid) {
        checked++;
        const response = await send(call);
        const detail = (response.body as { detail?: { loc?: unknown[] }[] } | undefined)?.detail;
        const named =
          Array.isArray(detail) &&
          detail.some((entry) => entry.loc?.[0] === call.loc[0] && entry.loc?.[1] === call.loc[1]);
        if (response.status !== 422 || !named) {
          accepted.push(`${operation} ${call.what}: ${response.status} ${brief(response.body)}`);
        }
      }
    }
    // The document yields about 1,850 refusals; far fewer would mean the generator lost its way.
    expect(checked).toBeGreaterThan(1000);
    expect(accepted).toEqual([]);
  });

  it('leaves unrefused only free-text parameters, and answers an id that names nothing with 404', async () => {
    for (const { operation, unrefusable, valid } of cases) {
      const [method, path] = operation.split(' ') as [string, string];
      type Parameter = { name: string; in: string; schema: Schema };
      const found = doc.paths[path]?.[method.toLowerCase()] as { parameters?: Parameter[] } | undefined;
      const parameters = found?.parameters ?? [];
      for (const field of unrefusable) {
        const [where, name] = field.split(' ');
        const parameter = parameters.find((p) => p.name === name && p.in === where);
        expect(parameter, `${operation}: ${field} can never be refused`).toBeDefined();
        expect(parameter?.schema, `${operation}: ${field}`).toMatchObject({ type: 'string' });
        for (const keyword of ['enum', 'pattern', 'minLength', 'maxLength', 'format']) {
          expect(parameter?.schema, `${operation}: ${field}`).not.toHaveProperty(keyword);
        }
      }
      if (parameters.some((p) => p.in === 'path')) {
        const response = await send(valid[0]!);
        expect(response.status, `${operation} with an id that names nothing`).toBe(404);
      }
    }
  });
});
