import { endpointByPath } from '@imagegen/contract';
import { acceptedValue, coercionGolden } from '@imagegen/contract/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, startApiHarness } from '../support/api-harness.ts';

/**
 * A sample of the contract's conversion cases (answers recorded from FastAPI 0.92 + pydantic 1.10)
 * sent over HTTP as raw bytes: the route, the body parser and the validator hook together answer
 * what the reference answered, and an accepted body is stored converted. The sample is every case
 * whose numbers are all ints within 2**53: a float literal's text (5.0 is the str "5.0") is the
 * body parser's record, which the contract's test hands the validator directly.
 */
const sample = Object.entries(coercionGolden).filter(([, golden]) => !golden.literals);

/**
 * The reference's answer as the task's input holds it. PostgreSQL's jsonb holds no NaN or
 * infinity: such a float, which only a float field without bounds accepts, is stored as null.
 */
function asStored(value: Record<string, unknown>): Record<string, unknown> {
  const nonFinite = new Set(['NaN', 'Infinity', '-Infinity']);
  return Object.fromEntries(
    Object.entries(value).map(([name, item]) => [name, nonFinite.has(item as string) ? null : item]),
  );
}

describe('values convert over HTTP as pydantic v1 converts them (a sample of the golden file)', () => {
  let api: ApiHarness;

  beforeAll(async () => {
    api = await startApiHarness();
  });
  afterAll(() => api.close());

  it('samples bodies and query strings, accepted and refused', () => {
    const statuses = new Set(sample.map(([, golden]) => `${golden.query === undefined}:${golden.status}`));
    expect(statuses).toEqual(new Set(['true:200', 'true:422', 'false:200', 'false:422']));
  });

  it.each(sample)('%s', async (_name, golden) => {
    if (golden.query !== undefined) {
      const response = await api.request('GET', `${golden.path}?${golden.query}`);
      expect(response.status).toBe(golden.status);
      if (golden.status === 422)
        expect(response.bytes.toString('utf8')).toBe(JSON.stringify(golden.response));
      return;
    }
    const response = await api.request('POST', golden.path, {
      body: golden.raw!,
      headers: { 'content-type': 'application/json' },
    });
    if (golden.status === 422) {
      expect(response.status).toBe(422);
      // The bytes on the wire, so that key order counts too.
      expect(response.bytes.toString('utf8')).toBe(JSON.stringify(golden.response));
      return;
    }
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const { id } = response.body as { id: string };
    const { rows } = await api.db.pool.query('SELECT input FROM tasks WHERE id = $1', [id]);
    const expected = acceptedValue(golden, endpointByPath(golden.path)!.request!);
    // The API draws the seed when -1 asks for a random one.
    const { seed, ...stored } = rows[0].input;
    const { seed: expectedSeed, ...rest } = expected;
    expect(stored).toEqual(asStored(rest));
    if (expectedSeed !== -1) expect(seed).toBe(expectedSeed);
  });
});
