import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, startApiHarness } from '../support/api-harness.ts';
import RECORD from './fixtures/original-requests.json' with { type: 'json' };

/**
 * The test of record: the example requests of the original service's docs pages and the payloads
 * its frontend builds (fixtures/original-requests.json, each with where it comes from), sent as
 * they are. Each is accepted, or refused with 422 by the API reference's rule the fixture names:
 * where a page and the API reference disagree, the reference wins.
 */

interface OriginalRequest {
  readonly name: string;
  readonly source: string;
  readonly path: string;
  readonly body: Record<string, unknown>;
  readonly accepted?: boolean;
  readonly refused?: { readonly rule: string; readonly detail: readonly { loc: string[]; type: string }[] };
}

const REQUESTS = RECORD.requests as readonly OriginalRequest[];

/** The server the enterprise account of the harness has: what the pages' server ids stand for. */
const SERVER_ID = 'gpu-1';
const SERVER_PLACEHOLDERS = new Set(Object.keys(RECORD.placeholders));

function withPlaceholders(body: Record<string, unknown>): Record<string, unknown> {
  const serverId = body['server_id'];
  return typeof serverId === 'string' && SERVER_PLACEHOLDERS.has(serverId)
    ? { ...body, server_id: SERVER_ID }
    : body;
}

describe('the original docs examples and frontend payloads', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApiHarness({ withWorkers: false });
  });
  afterAll(() => api.close());

  it('name their source and either an acceptance or the rule that refuses them', () => {
    expect(REQUESTS.length).toBeGreaterThanOrEqual(15);
    for (const request of REQUESTS) {
      expect(request.source, request.name).toMatch(
        /^(https:\/\/docs\.imagepipeline\.io\/|Model-Pipelines\/)/,
      );
      expect(Boolean(request.accepted) !== Boolean(request.refused), request.name).toBe(true);
    }
    for (const path of ['/generate/v1', '/generate/v2', '/generate/v3']) {
      expect(REQUESTS.some((request) => request.path === path && request.accepted)).toBe(true);
    }
  });

  for (const request of REQUESTS.filter((r) => r.accepted)) {
    it(`accepts ${request.name} at ${request.path}`, async () => {
      const response = await api.request('POST', request.path, {
        key: api.enterprise.key,
        json: withPlaceholders(request.body),
      });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      expect(response.body).toMatchObject({ status: 'PENDING', id: expect.any(String) });
    });
  }

  for (const request of REQUESTS.filter((r) => r.refused)) {
    it(`refuses ${request.name} at ${request.path}: ${request.refused!.rule}`, async () => {
      const response = await api.request('POST', request.path, {
        key: api.enterprise.key,
        json: withPlaceholders(request.body),
      });
      expect(response.status).toBe(422);
      const detail = (response.body as { detail: { loc: string[]; type: string }[] }).detail;
      expect(detail.map(({ loc, type }) => ({ loc, type }))).toEqual(request.refused!.detail);
    });
  }
});
