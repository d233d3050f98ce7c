import type { ErrorObject } from 'ajv';
import type { RequestPart, ValidationErrorEntry } from './endpoint.ts';
import { httpUrlProblem } from './http-url.ts';
import { HTTP_URL_KEYWORD } from './schemas/common.ts';

/**
 * Ajv errors → the 422 `detail` list FastAPI writes with pydantic v1: its words, its `type`
 * codes, its ctx, one entry per failing value, in the order of the model's fields.
 */

const TYPE_WORDS: Record<string, [string, string]> = {
  integer: ['value is not a valid integer', 'type_error.integer'],
  number: ['value is not a valid float', 'type_error.float'],
  string: ['str type expected', 'type_error.str'],
  boolean: ['value could not be parsed to a boolean', 'type_error.bool'],
  array: ['value is not a valid list', 'type_error.list'],
  object: ['value is not a valid dict', 'type_error.dict'],
};

const BOUND_WORDS: Record<string, [string, string]> = {
  exclusiveMinimum: ['ensure this value is greater than', 'value_error.number.not_gt'],
  minimum: ['ensure this value is greater than or equal to', 'value_error.number.not_ge'],
  exclusiveMaximum: ['ensure this value is less than', 'value_error.number.not_lt'],
  maximum: ['ensure this value is less than or equal to', 'value_error.number.not_le'],
};

/** Size limits on lists and strings: pydantic's words for the bound, the unit and the type. */
const SIZE_WORDS: Record<string, [string, string, string]> = {
  maxItems: ['at most', 'items', 'value_error.list.max_items'],
  minItems: ['at least', 'items', 'value_error.list.min_items'],
  maxLength: ['at most', 'characters', 'value_error.any_str.max_length'],
  minLength: ['at least', 'characters', 'value_error.any_str.min_length'],
};

const NOT_NONE: Omit<ValidationErrorEntry, 'loc'> = {
  msg: 'none is not an allowed value',
  type: 'type_error.none.not_allowed',
};

export const MISSING: Omit<ValidationErrorEntry, 'loc'> = {
  msg: 'field required',
  type: 'value_error.missing',
};

/** Python's repr of a str, as pydantic puts enum members in its message. */
function pyRepr(value: unknown): string {
  if (typeof value === 'string') {
    return value.includes("'") && !value.includes('"') ? `"${value}"` : `'${value.replace(/'/g, "\\'")}'`;
  }
  return String(value);
}

function pointerToLoc(pointer: string): (string | number)[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((segment, depth) => {
      const key = segment.replace(/~1/g, '/').replace(/~0/g, '~');
      // Below the top level our bodies hold only arrays, so a numeric segment is a list index.
      return depth > 0 && /^\d+$/.test(key) ? Number(key) : key;
    });
}

/** The words pydantic uses for one failed keyword; undefined for wrapper keywords (anyOf, if). */
function describe(error: ErrorObject): Omit<ValidationErrorEntry, 'loc'> | undefined {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return MISSING;
    case 'type': {
      if (error.data === null) return NOT_NONE;
      const words = TYPE_WORDS[String(params.type)];
      return words && { msg: words[0], type: words[1] };
    }
    case 'enum': {
      if (error.data === null) return NOT_NONE;
      const members = params.allowedValues as unknown[];
      return {
        msg: `value is not a valid enumeration member; permitted: ${members.map(pyRepr).join(', ')}`,
        type: 'type_error.enum',
        ctx: { enum_values: members },
      };
    }
    case 'exclusiveMinimum':
    case 'minimum':
    case 'exclusiveMaximum':
    case 'maximum': {
      const [msg, type] = BOUND_WORDS[error.keyword]!;
      return { msg: `${msg} ${params.limit}`, type, ctx: { limit_value: params.limit } };
    }
    case 'maxItems':
    case 'minItems':
    case 'maxLength':
    case 'minLength': {
      const [bound, unit, type] = SIZE_WORDS[error.keyword]!;
      return {
        msg: `ensure this value has ${bound} ${params.limit} ${unit}`,
        type,
        ctx: { limit_value: params.limit },
      };
    }
    case 'pattern':
      return {
        msg: `string does not match regex "${params.pattern}"`,
        type: 'value_error.str.regex',
        ctx: { pattern: params.pattern },
      };
    case HTTP_URL_KEYWORD:
      return httpUrlProblem(String(error.data));
    default:
      return undefined;
  }
}

/** The schema object an error belongs to: its schemaPath without the keyword. */
function schemaObjectPath(error: ErrorObject): string {
  return error.schemaPath.slice(0, error.schemaPath.lastIndexOf('/'));
}

function isNullBranch(error: ErrorObject): boolean {
  return error.keyword === 'type' && (error.params as { type?: unknown }).type === 'null';
}

function isEnumTypeError(error: ErrorObject): boolean {
  const parent = error.parentSchema as { enum?: unknown } | undefined;
  return error.keyword === 'type' && parent?.enum !== undefined && error.data !== null;
}

/**
 * pydantic stops at a value's first failing check, so a type error hides the other checks of the
 * same schema, a URL's length check hides its URL checks (AnyUrl measures first), and a list's
 * length check (a "pre" validator in v1) hides the checks of its items.
 */
function shadowed(error: ErrorObject, all: readonly ErrorObject[]): boolean {
  const here = schemaObjectPath(error);
  if (
    error.keyword === HTTP_URL_KEYWORD &&
    all.some(
      (other) =>
        (other.keyword === 'minLength' || other.keyword === 'maxLength') &&
        other.instancePath === error.instancePath &&
        schemaObjectPath(other) === here,
    )
  ) {
    return true;
  }
  if (
    error.keyword !== 'type' &&
    all.some(
      (other) =>
        other.keyword === 'type' &&
        !isNullBranch(other) &&
        !isEnumTypeError(other) &&
        other.instancePath === error.instancePath &&
        schemaObjectPath(other) === here,
    )
  ) {
    return true;
  }
  return all.some(
    (other) =>
      (other.keyword === 'maxItems' || other.keyword === 'minItems') &&
      error.instancePath.startsWith(`${other.instancePath}/`),
  );
}

/**
 * Turns Ajv's errors (compiled with allErrors and verbose) into pydantic v1's detail list.
 * `fieldOrder` lists the model's fields in declaration order; entries are sorted by it. A null
 * sent for an enumeration answers pydantic's `none is not an allowed value` once.
 */
export function toPydanticDetail(
  errors: readonly ErrorObject[],
  fieldOrder: readonly string[],
  where: RequestPart = 'body',
): ValidationErrorEntry[] {
  const entries: ValidationErrorEntry[] = [];
  const seen = new Set<string>();
  for (const error of errors) {
    if (isNullBranch(error) || isEnumTypeError(error) || shadowed(error, errors)) continue;
    const words = describe(error);
    if (!words) continue;
    const loc = pointerToLoc(error.instancePath);
    if (error.keyword === 'required')
      loc.push(String((error.params as { missingProperty: string }).missingProperty));
    const entry: ValidationErrorEntry = { loc: [where, ...loc], msg: words.msg, type: words.type };
    if (words.ctx) entry.ctx = words.ctx;
    const key = JSON.stringify(entry);
    if (seen.has(key)) continue;
    seen.add(key);
    entries.push(entry);
  }
  const rank = (field: string | number | undefined) => {
    const index = fieldOrder.indexOf(String(field));
    return index === -1 ? fieldOrder.length : index;
  };
  return entries
    .map((entry, arrival) => ({ entry, arrival }))
    .sort((a, b) => compareLoc(a.entry.loc, b.entry.loc, rank) || a.arrival - b.arrival)
    .map(({ entry }) => entry);
}

function compareLoc(
  a: readonly (string | number)[],
  b: readonly (string | number)[],
  rank: (field: string | number | undefined) => number,
): number {
  const byField = rank(a[1]) - rank(b[1]);
  if (byField !== 0) return byField;
  for (let i = 2; i < Math.min(a.length, b.length); i++) {
    const x = a[i];
    const y = b[i];
    if (typeof x === 'number' && typeof y === 'number' && x !== y) return x - y;
  }
  return 0;
}
