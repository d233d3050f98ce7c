import { describe, expect, it } from 'vitest';
import { compileRequestValidator, endpointByPath, readRequestBody } from '../src/index.ts';
import { type DecodeCase, decodeGolden, jsonNames, requestBytes } from './support/decode-golden.ts';

/**
 * What the contract answers for a recorded request: its body reader, then its validator. An
 * accepted body lists the fields the golden case names (the others hold defaults, which the
 * reference leaves out).
 */
function answer(golden: DecodeCase): Pick<DecodeCase, 'status' | 'response'> {
  const reading = readRequestBody(requestBytes(golden), golden.contentType);
  if (!reading.ok) return { status: reading.status, response: { detail: reading.detail } };
  const checked = compileRequestValidator(endpointByPath(golden.path)!)(reading.value);
  if (!checked.ok) return { status: 422, response: { detail: checked.detail } };
  const fields = 'accepted' in golden.response ? Object.keys(golden.response.accepted) : [];
  const value = checked.value as Record<string, unknown>;
  return {
    status: 200,
    response: { accepted: Object.fromEntries(fields.map((name) => [name, jsonNames(value[name])])) },
  };
}

// The upload endpoint reads a form, not JSON: the server's test replays its cases.
const jsonCases = Object.entries(decodeGolden).filter(([, golden]) => endpointByPath(golden.path)?.request);

describe('request bodies are read as FastAPI reads them (decode golden file)', () => {
  it('holds accepted and refused cases of the JSON endpoints', () => {
    const statuses = new Set(jsonCases.map(([, golden]) => golden.status));
    expect(statuses).toEqual(new Set([200, 400, 422]));
  });

  it.each(jsonCases)('%s', (_name, golden) => {
    // Compared as serialised JSON so that key order matters too, as it does on the wire.
    expect(JSON.stringify(answer(golden))).toBe(
      JSON.stringify({ status: golden.status, response: golden.response }),
    );
  });
});
