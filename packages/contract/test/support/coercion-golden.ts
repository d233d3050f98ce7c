import { readFileSync } from 'node:fs';
import type { TSchema } from 'typebox';
import { numberLiteral, parseJsonBody, recordNumberLiteral } from '../../src/index.ts';

/**
 * Answers recorded from FastAPI 0.92 + pydantic 1.10, with models mirroring our schemas, to
 * bodies and query strings whose values pydantic converts (fixtures/coercion.golden.json). A case
 * is a raw body (or a query string) and the status and body the reference answered: a 422's
 * detail, or for a 200 the validated model (the fields sent or defaulted). The contract's test
 * replays every case through the validator; the server's replays a sample over HTTP.
 */

export interface NumberLiteralCase {
  /** Where the number is in the body: field names and list indexes. */
  path: (string | number)[];
  text: string;
  float: boolean;
}

export interface CoercionCase {
  path: string;
  raw?: string;
  query?: string;
  /** The numbers the body writes as floats, or as ints beyond 2**53, as Python's json reads them. */
  literals?: NumberLiteralCase[];
  status: 200 | 422;
  response: Record<string, unknown>;
}

export const coercionGolden: Record<string, CoercionCase> = JSON.parse(
  readFileSync(new URL('../fixtures/coercion.golden.json', import.meta.url), 'utf8'),
);

const NON_FINITE: Record<string, number> = {
  NaN: Number.NaN,
  Infinity: Number.POSITIVE_INFINITY,
  '-Infinity': Number.NEGATIVE_INFINITY,
};
/** A NaN or Infinity literal where a value starts (the cases hold none inside strings there). */
const NON_FINITE_LITERAL = /(?<=[[:,]\s*)(?:-?Infinity|NaN)(?=\s*[,\]}])/g;

/**
 * The body as the API's parser hands it over, with the parser's record of how each number was
 * written; where the parser kept no record of a number the case lists, the case's record is
 * used, so these cases judge the conversions on their own. Reading the NaN and Infinity literals
 * is the body reader's business: where it refuses them, they are read as null and then set to
 * the values Python's json module reads.
 */
export function parsedBody(golden: CoercionCase): unknown {
  let result = parseJsonBody(golden.raw!);
  if (!result.ok) result = parseJsonBody(golden.raw!.replace(NON_FINITE_LITERAL, 'null'));
  if (!result.ok) throw new Error(`the case's body does not parse: ${JSON.stringify(result.detail)}`);
  for (const { path, text, float } of golden.literals ?? []) {
    const key = path.at(-1)!;
    const container = path.slice(0, -1).reduce<unknown>((at, step) => (at as never)[step], result.value);
    const members = container as Record<string | number, unknown>;
    if (text in NON_FINITE) members[key] = NON_FINITE[text];
    if (!numberLiteral(container as object, key))
      recordNumberLiteral(container as object, key, { float, text });
  }
  return result.value;
}

/** Whether the case needs nothing of the body reader beyond what JSON.parse reads. */
export function isPlainJson(golden: CoercionCase): boolean {
  return (golden.literals ?? []).every(({ text }) => !(text in NON_FINITE));
}

/**
 * What a validated body holds for an accepted case, written as the reference writes it (NaN and
 * the infinities under their json names, quoted). A field whose default is None holds None when
 * it was not sent, or sent as null: the reference answers it as null, our value leaves it out
 * (nullable fields keep their null).
 */
export function acceptedValue(golden: CoercionCase, schema: TSchema): Record<string, unknown> {
  const { properties, required = [] } = schema as ModelSchema;
  const absent = (name: string) => {
    const field = properties[name];
    const nullable = field?.type === 'null' || field?.anyOf?.some((branch) => branch.type === 'null');
    return !required.includes(name) && field !== undefined && !('default' in field) && !nullable;
  };
  return Object.fromEntries(
    Object.entries(golden.response).filter(([name, value]) => value !== null || !absent(name)),
  );
}

interface ModelSchema {
  properties: Record<string, { default?: unknown; type?: string; anyOf?: { type?: string }[] }>;
  required?: string[];
}

/** The reference answers NaN and the infinities under their json names, quoted (its JSON cannot hold them). */
export function jsonNames(value: unknown): unknown {
  if (typeof value === 'number' && !Number.isFinite(value)) {
    return Number.isNaN(value) ? 'NaN' : value > 0 ? 'Infinity' : '-Infinity';
  }
  if (Array.isArray(value)) return value.map(jsonNames);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, jsonNames(item)]));
  }
  return value;
}
