import { Ajv2020 } from 'ajv/dist/2020.js';
import type { TSchema } from 'typebox';
import type { Endpoint, ValidationErrorEntry, ValidationResult } from './endpoint.ts';
import { httpUrlProblem } from './http-url.ts';
import { MISSING, toPydanticDetail } from './pydantic-errors.ts';
import { HTTP_URL_KEYWORD, IMAGE_KEYWORD } from './schemas/common.ts';

/**
 * One Ajv instance for every request schema. Strict JSON types (no coercion), every error at
 * once (pydantic reports all fields), defaults filled in, unknown fields dropped (pydantic v1's
 * default `extra = ignore`).
 */
const ajv = new Ajv2020({
  allErrors: true,
  verbose: true,
  useDefaults: true,
  removeAdditional: true,
  coerceTypes: false,
  strict: true,
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

/** Query strings arrive as text: here "20" is the integer 20, as FastAPI reads query parameters. */
const queryAjv = new Ajv2020({
  allErrors: true,
  verbose: true,
  useDefaults: true,
  coerceTypes: true,
  strict: true,
});

export type RequestValidator<T = Record<string, unknown>> = (body: unknown) => ValidationResult<T>;

const cache = new WeakMap<TSchema, RequestValidator>();

/**
 * Compiles the validator of an endpoint's request body (or multipart fields). The body is changed
 * in place: defaults are written into it and unknown fields deleted; `value` is that same object.
 */
export function compileRequestValidator(endpoint: Endpoint): RequestValidator {
  const schema = endpoint.request ?? endpoint.multipart;
  if (!schema) throw new Error(`${endpoint.method} ${endpoint.path} has no request body`);
  return compileSchemaValidator(schema);
}

export function compileSchemaValidator(schema: TSchema): RequestValidator {
  const cached = cache.get(schema);
  if (cached) return cached;
  const properties = (schema as { properties?: Record<string, unknown> }).properties ?? {};
  const fieldOrder = Object.keys(properties);
  // Closed at the top so that removeAdditional drops unknown fields; the published schema stays open.
  const validate = ajv.compile({ ...schema, additionalProperties: false });
  const validator: RequestValidator = (body) => {
    if (body === undefined || body === null) {
      return { ok: false, detail: [{ loc: ['body'], ...MISSING }] };
    }
    if (validate(body)) return { ok: true, value: body as Record<string, unknown> };
    const detail: ValidationErrorEntry[] = toPydanticDetail(validate.errors ?? [], fieldOrder);
    return { ok: false, detail };
  };
  cache.set(schema, validator);
  return validator;
}

const queryCache = new WeakMap<TSchema, RequestValidator>();

/**
 * Compiles the validator of a GET endpoint's query parameters (`endpoint.query`): converts
 * numbers, fills defaults, drops unknown parameters; errors are located at `["query", name]`.
 */
export function compileQueryValidator(endpoint: Endpoint): RequestValidator {
  const schema = endpoint.query;
  if (!schema) return (query) => ({ ok: true, value: { ...(query as Record<string, unknown>) } });
  const cached = queryCache.get(schema);
  if (cached) return cached;
  const fieldOrder = Object.keys((schema as { properties?: Record<string, unknown> }).properties ?? {});
  const validate = queryAjv.compile({ ...schema, additionalProperties: false });
  const validator: RequestValidator = (query) => {
    const value = Object.fromEntries(
      Object.entries((query ?? {}) as Record<string, unknown>).filter(([key]) => fieldOrder.includes(key)),
    );
    if (validate(value)) return { ok: true, value };
    return { ok: false, detail: toPydanticDetail(validate.errors ?? [], fieldOrder, 'query') };
  };
  queryCache.set(schema, validator);
  return validator;
}
