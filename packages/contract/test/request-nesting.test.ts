import { describe, expect, it } from 'vitest';
import {
  BODY_PARSE_ERROR,
  compileRequestValidator,
  endpointByPath,
  endpoints,
  MAX_REQUEST_NESTING,
  parseJsonBody,
  readRequestBody,
} from '../src/index.ts';

/**
 * The body reader builds containers only as deep as a request schema looks (MAX_REQUEST_NESTING,
 * one more for a body of pairs): deeper ones read as an empty frozen container of their kind; and
 * it keeps only the members the body's schema names. These tests keep that invisible: no schema
 * looks deeper, and every answer is the one a whole read gives.
 */

type SchemaNode = Record<string, unknown>;

/** How deep the containers a schema describes nest (an object or a list is one level). */
function nesting(schema: SchemaNode, where: string, loose: string[]): number {
  let deepest = 0;
  for (const branch of ['anyOf', 'oneOf', 'allOf'] as const) {
    for (const member of (schema[branch] as SchemaNode[] | undefined) ?? []) {
      deepest = Math.max(deepest, nesting(member, where, loose));
    }
  }
  // A member of allOf may be a condition (if/then) on the object's other members, not a value.
  const typed = ['type', 'anyOf', 'oneOf', 'allOf', 'enum', 'const', 'if'].some((word) => word in schema);
  if (
    !typed ||
    '$ref' in schema ||
    typeof schema.additionalProperties === 'object' ||
    schema.additionalProperties === true
  ) {
    loose.push(where);
  }
  if (schema.properties) {
    for (const [name, member] of Object.entries(schema.properties as Record<string, SchemaNode>)) {
      deepest = Math.max(deepest, 1 + nesting(member, `${where}.${name}`, loose));
    }
  }
  if (schema.items) deepest = Math.max(deepest, 1 + nesting(schema.items as SchemaNode, `${where}[]`, loose));
  return deepest;
}

/** The contract's answer to a body: the reader's refusal, the validator's detail, or the value. */
function answer(path: string, text: string, read = readRequestBody): unknown {
  const endpoint = endpointByPath(path)!;
  const reading = read(Buffer.from(text), 'application/json', endpoint.request);
  if (!reading.ok) return { status: reading.status, detail: reading.detail };
  const checked = compileRequestValidator(endpoint)(reading.value);
  return checked.ok ? { value: checked.value } : { status: 422, detail: checked.detail };
}

/** The same, from a read that builds every container. */
const wholeRead: typeof readRequestBody = (bytes) => {
  try {
    const parsed = parseJsonBody(Buffer.from(bytes).toString('utf8'));
    return parsed.ok ? parsed : { ok: false, status: 422, detail: parsed.detail };
  } catch {
    // What Python fails to read otherwise (nesting, an int's digits): FastAPI's 400.
    return { ok: false, status: 400, detail: BODY_PARSE_ERROR };
  }
};

const SD = '/sd/text2image/v1';

describe('the depth the body reader builds', () => {
  it('is as deep as any request schema looks, and no schema holds free-form members', () => {
    const loose: string[] = [];
    let deepest = 0;
    for (const endpoint of endpoints) {
      if (endpoint.request)
        deepest = Math.max(deepest, nesting(endpoint.request as SchemaNode, endpoint.path, loose));
    }
    expect(loose).toEqual([]);
    expect(deepest).toBe(MAX_REQUEST_NESTING);
  });

  it.each([
    ['lists in a list of strings', `{"prompt":"x","negative_prompt":"y","embeddings":[[["a",1.5]],[],"b"]}`],
    [
      'objects in a list of numbers',
      `{"prompt":"x","negative_prompt":"y","lora_weights":[{"a":{"b":1e400}},{},0.5]}`,
    ],
    ['deep lists where a string goes', `{"prompt":[[[[["x"]]]]],"negative_prompt":{"a":[{}]}}`],
    [
      'unknown fields beside known ones',
      `{"a":[1],"prompt":"x","b":{"c":2},"negative_prompt":"y","prompt":7,"d":1.5}`,
    ],
    [
      'an unknown field named like a prototype',
      `{"__proto__":{"prompt":"x"},"prompt":"y","negative_prompt":"z"}`,
    ],
    ['a decode error in an unknown field', `{"prompt":"x","negative_prompt":"y","z":[1,}`],
    [
      'a deep unknown field beside valid ones',
      `{"prompt":"x","negative_prompt":"y","extra":{"a":[[{"b":[1.0]}]]}}`,
    ],
    [
      'fields as pairs, a list value',
      `[["prompt","x"],["negative_prompt","y"],["lora_weights",[0.5,[1.5],{"a":2}]]]`,
    ],
    [
      'fields as pairs, deep values',
      `[["prompt",[["x"]]],["negative_prompt","y"],["embeddings",[[[1]],{"k":[2]}]]]`,
    ],
    ['a decode error deep inside', `{"prompt":"x","embeddings":[[[{"a":[1,2,}]]]]}`],
    ['a bad key deep inside', `{"prompt":"x","embeddings":[[{"a":1,2:3}]]}`],
    ['a bad escape deep inside', `{"prompt":"x","embeddings":[[["\\q"]]]}`],
    ['an int too long deep inside', `{"prompt":"x","embeddings":[[[${'9'.repeat(4301)}]]]}`],
    [
      'nesting deeper than Python reads',
      `{"prompt":"x","embeddings":${'['.repeat(1000)}${']'.repeat(1000)}}`,
    ],
  ])('answers %s as a whole read does', (_name, text) => {
    expect(JSON.stringify(answer(SD, text))).toBe(JSON.stringify(answer(SD, text, wholeRead)));
  });

  it('keeps only the members the schema names', () => {
    const endpoint = endpointByPath(SD)!;
    const reading = readRequestBody(
      Buffer.from('{"prompt":"x","f1":[1],"f2":{"a":1}}'),
      undefined,
      endpoint.request,
    );
    expect(reading).toEqual({ ok: true, value: { prompt: 'x' } });
  });

  it('reads what lies deeper as one frozen empty container of its kind', () => {
    const parsed = parseJsonBody('{"a":[[1,{"b":2}],{"c":[3]}]}', { buildDepth: 2 });
    expect(parsed).toEqual({ ok: true, value: { a: [[], {}] } });
    const [list, object] = (parsed as { value: { a: [unknown[], object] } }).value.a;
    expect(Object.isFrozen(list) && Object.isFrozen(object)).toBe(true);
    expect((parseJsonBody('[[[3]]]', { buildDepth: 2 }) as { value: unknown[][] }).value[0]?.[0]).toBe(
      (parseJsonBody('{"x":[[4,5]]}', { buildDepth: 2 }) as { value: { x: unknown[] } }).value.x[0],
    );
  });
});
