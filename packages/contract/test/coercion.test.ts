import { describe, expect, it } from 'vitest';
import { compileRequestValidator, compileValidator, endpointByPath } from '../src/index.ts';
import {
  acceptedValue,
  type CoercionCase,
  coercionGolden,
  jsonNames,
  parsedBody,
} from './support/coercion-golden.ts';

/**
 * pydantic v1's conversions, judged against answers recorded from FastAPI 0.92 + pydantic 1.10
 * (support/coercion-golden.ts). A refused case must answer the recorded detail byte for byte; an
 * accepted one must validate to the recorded model, since that is what a task stores and an
 * engine reads.
 */

/** A query string as Fastify hands it over: a parameter given twice is an array. */
function queryParameters(query: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of new URLSearchParams(query)) {
    const before = out[name];
    out[name] = before === undefined ? value : [...[before].flat(), value];
  }
  return out;
}

function endpointOf(golden: CoercionCase) {
  const endpoint = endpointByPath(golden.path);
  if (!endpoint) throw new Error(`no endpoint ${golden.path}`);
  return endpoint;
}

function validate(golden: CoercionCase) {
  const endpoint = endpointOf(golden);
  if (golden.query !== undefined) {
    return compileValidator(endpoint.query!, 'query')(queryParameters(golden.query));
  }
  return compileRequestValidator(endpoint)(parsedBody(golden));
}

describe('values convert as pydantic v1 converts them (golden file)', () => {
  it.each(Object.entries(coercionGolden))('%s', (_name, golden) => {
    const result = validate(golden);
    if (golden.status === 422) {
      // Compared as serialised JSON so that key order matters too, as it does on the wire.
      expect(JSON.stringify(result.ok ? result.value : { detail: result.detail })).toBe(
        JSON.stringify(golden.response),
      );
    } else {
      const endpoint = endpointOf(golden);
      const schema = golden.query === undefined ? endpoint.request! : endpoint.query!;
      expect(result.ok ? jsonNames(result.value) : result.detail).toEqual(acceptedValue(golden, schema));
    }
  });

  it('covers every conversion class on several endpoints, accepted and refused', () => {
    const cases = Object.entries(coercionGolden);
    for (const kind of ['int', 'float', 'str', 'bool', 'url', 'list', 'enum', 'null', 'upscaler', 'query']) {
      const ofKind = cases.filter(([name]) => name.startsWith(`${kind}:`));
      expect(ofKind.length, kind).toBeGreaterThan(0);
      if (kind !== 'enum')
        expect(
          ofKind.some(([, c]) => c.status === 200),
          `${kind} accepted`,
        ).toBe(true);
      expect(
        ofKind.some(([, c]) => c.status === 422),
        `${kind} refused`,
      ).toBe(true);
    }
    expect(new Set(cases.map(([, c]) => c.path)).size).toBeGreaterThanOrEqual(10);
  });
});
