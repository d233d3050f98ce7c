import { decodeGolden, requestBytes } from '@imagegen/contract/testing/decode-golden';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, startApiHarness } from '../support/api-harness.ts';

/**
 * The contract's decode cases (raw bytes and Content-Types, answers recorded from FastAPI 0.92 +
 * pydantic 1.10) sent over HTTP exactly as recorded, the upload endpoint's included: Fastify's
 * body handling, the contract's body reader, the validator hook and the upload's form reader
 * together answer what the reference answered, byte for byte; an accepted body is stored with the
 * fields it sent.
 */
const cases = Object.entries(decodeGolden);

/** PostgreSQL's jsonb holds no NaN or infinity: an accepted one is stored as null. */
const NON_FINITE = new Set(['NaN', 'Infinity', '-Infinity']);
const asStored = (value: unknown) => (NON_FINITE.has(value as string) ? null : value);

describe('request bodies over HTTP are read as FastAPI reads them (decode golden file)', () => {
  let api: ApiHarness;

  beforeAll(async () => {
    api = await startApiHarness();
  });
  afterAll(() => api.close());

  it.each(cases)('%s', async (_name, golden) => {
    const headers: Record<string, string> = {};
    if (golden.contentType !== undefined) headers['content-type'] = golden.contentType;
    // Bytes, so that fetch adds no Content-Type of its own.
    const response = await api.request('POST', golden.path, { body: requestBytes(golden), headers });
    if (!('accepted' in golden.response)) {
      expect(response.status).toBe(golden.status);
      // The bytes on the wire, so that key order counts too.
      expect(response.bytes.toString('utf8')).toBe(JSON.stringify(golden.response));
      return;
    }
    expect(response.status, response.bytes.toString('utf8')).toBe(200);
    const { id } = response.body as { id: string };
    const { rows } = await api.db.pool.query('SELECT input FROM tasks WHERE id = $1', [id]);
    const accepted = Object.entries(golden.response.accepted);
    const stored = rows[0].input as Record<string, unknown>;
    expect(Object.fromEntries(accepted.map(([name]) => [name, stored[name]]))).toEqual(
      Object.fromEntries(accepted.map(([name, value]) => [name, asStored(value)])),
    );
  });
});
