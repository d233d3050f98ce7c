import type { ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { TSchema } from 'typebox';
import { compileCoercion, locateAsSent } from './coercion.ts';
import type { Endpoint, RequestPart, ValidationErrorEntry, ValidationResult } from './endpoint.ts';
import { httpUrlProblem } from './http-url.ts';
import { detailWithLongLists, LONG_LIST_ITEMS, longListFields } from './long-lists.ts';
import { MISSING, toPydanticDetail } from './pydantic-errors.ts';
import { modelInput } from './python-dict.ts';
import { EMPTY_IS_ABSENT_KEYWORD, HTTP_URL_KEYWORD, IMAGE_KEYWORD } from './schemas/common.ts';

/**
 * One Ajv instance for every request schema (and one that stops at the first error, for bodies
 * with long lists: long-lists.ts). Values are first converted as pydantic v1 converts
 * them (coercion.ts), so Ajv itself converts nothing; it reports every error at once (pydantic
 * reports all fields), fills defaults in and drops unknown fields (pydantic v1's default `extra =
 * ignore`). Non-finite numbers are numbers to it, as NaN and infinity are floats to pydantic: a
 * float field judges them by its bounds.
 */
function newAjv(allErrors: boolean): Ajv2020 {
  const ajv = new Ajv2020({
    allErrors,
    verbose: true,
    useDefaults: true,
    removeAdditional: true,
    coerceTypes: false,
    strict: true,
    strictNumbers: false,
    strictRequired: false,
    strictTypes: false,
    // Documentation-only formats: the URL check is our keyword, uploads are multipart parts.
    formats: { uri: true, binary: true, 'date-time': true },
  });
  ajv.addKeyword({
    keyword: HTTP_URL_KEYWORD,
    type: 'string',
    schemaType: 'boolean',
    errors: 'full',
    validate: (enabled: boolean, data: string) => !enabled || httpUrlProblem(data) === undefined,
  });
  ajv.addKeyword({ keyword: IMAGE_KEYWORD, schemaType: 'boolean' });
  // Read by coercion.ts before Ajv sees the body: an annotation to Ajv.
  ajv.addKeyword({ keyword: EMPTY_IS_ABSENT_KEYWORD, schemaType: 'boolean' });
  return ajv;
}

const ajv = newAjv(true);
/**
 * The same checks, stopping at the first failure: for a body with long lists, whether it is valid
 * at all costs no error per item (on a valid body both do the same work, defaults included).
 */
const firstFailure = newAjv(false);

type RequestValidator<T = Record<string, unknown>> = (body: unknown) => ValidationResult<T>;

const caches: Record<RequestPart, WeakMap<TSchema, RequestValidator>> = {
  body: new WeakMap(),
  query: new WeakMap(),
  path: new WeakMap(),
};

/**
 * Compiles the validator of one part of a request: the JSON body (or the multipart fields), the
 * query string or the path parameters. The API runs these through Fastify's validator hook.
 *
 * A body is changed in place (values converted to their fields' types, defaults written into it,
 * unknown fields deleted) and `value` is that same object. Query and path parameters arrive as
 * text, read by the same rules ("20" is the integer 20, as FastAPI reads it); `value` is a new
 * object with defaults filled in and unknown parameters left out.
 */
export function compileValidator(schema: TSchema, part: RequestPart): RequestValidator {
  const cached = caches[part].get(schema);
  if (cached) return cached;
  const validator = part === 'body' ? bodyValidator(schema) : parameterValidator(schema, part);
  caches[part].set(schema, validator);
  return validator;
}

/**
 * A body validator that checks every item of every list, however long (the API's cuts long lists
 * short: long-lists.ts). Its answers are the ones the API must give: tests compare the two.
 */
export function compileUncutBodyValidator(schema: TSchema): RequestValidator {
  return bodyValidator(schema, Number.POSITIVE_INFINITY);
}

/** The validator of an endpoint's request body (or multipart fields). */
export function compileRequestValidator(endpoint: Endpoint): RequestValidator {
  const schema = endpoint.request ?? endpoint.multipart;
  if (!schema) throw new Error(`${endpoint.method} ${endpoint.path} has no request body`);
  return compileValidator(schema, 'body');
}

function fieldsOf(schema: TSchema): string[] {
  return Object.keys((schema as { properties?: Record<string, unknown> }).properties ?? {});
}

function propertyType(schema: TSchema, name: string): unknown {
  return (schema as { properties?: Record<string, { type?: unknown }> }).properties?.[name]?.type;
}

function bodyValidator(schema: TSchema, longList = LONG_LIST_ITEMS): RequestValidator {
  const fieldOrder = fieldsOf(schema);
  const coerce = compileCoercion(schema);
  const validate = compileClosed(schema);
  let validOrNot: ValidateFunction | undefined;
  return (input) => {
    const asDict = modelInput(input);
    if (!asDict.ok) return asDict;
    const body = asDict.value;
    if (body === undefined || body === null) {
      return { ok: false, detail: [{ loc: ['body'], ...MISSING }] };
    }
    coerce(body);
    const fields = body as Record<string, unknown>;
    const longFields = longListFields(fields, fieldOrder, longList);
    if (longFields.length > 0) {
      validOrNot ??= firstFailure.compile(closed(schema));
      if (validOrNot(body)) return { ok: true, value: fields };
      const maxItems = (field: string) => largestMaxItems(propertyOf(schema, field));
      const detail = detailWithLongLists(fields, longFields, validate, fieldOrder, maxItems);
      locateAsSent(detail, fields);
      return { ok: false, detail };
    }
    if (validate(body)) return { ok: true, value: fields };
    const detail: ValidationErrorEntry[] = toPydanticDetail(validate.errors ?? [], fieldOrder);
    locateAsSent(detail, fields);
    return { ok: false, detail };
  };
}

/** Closed at the top so that removeAdditional drops unknown fields; the published schema stays open. */
function closed(schema: TSchema): object {
  return { ...schema, additionalProperties: false };
}

function compileClosed(schema: TSchema): ValidateFunction {
  return ajv.compile(closed(schema));
}

function propertyOf(schema: TSchema, name: string): SchemaNode | undefined {
  return (schema as { properties?: Record<string, SchemaNode> }).properties?.[name];
}

interface SchemaNode {
  maxItems?: number;
  anyOf?: SchemaNode[];
}

/** The largest length bound of the lists a field may hold (its union's list branches included). */
function largestMaxItems(node: SchemaNode | undefined): number | undefined {
  if (!node) return undefined;
  const bounds = [node.maxItems, ...(node.anyOf ?? []).map(largestMaxItems)].filter(
    (bound): bound is number => bound !== undefined,
  );
  return bounds.length > 0 ? Math.max(...bounds) : undefined;
}

function parameterValidator(schema: TSchema, part: 'query' | 'path'): RequestValidator {
  const fieldOrder = fieldsOf(schema);
  const lists = new Set(fieldOrder.filter((name) => propertyType(schema, name) === 'array'));
  const coerce = compileCoercion(schema);
  const validate = compileClosed(schema);
  return (parameters) => {
    // A parameter given twice arrives as an array; FastAPI reads the last one for a single value.
    const value = Object.fromEntries(
      Object.entries((parameters ?? {}) as Record<string, unknown>)
        .filter(([key]) => fieldOrder.includes(key))
        .map(([key, given]) => [key, Array.isArray(given) && !lists.has(key) ? given.at(-1) : given]),
    );
    coerce(value);
    if (validate(value)) return { ok: true, value };
    return { ok: false, detail: toPydanticDetail(validate.errors ?? [], fieldOrder, part) };
  };
}
