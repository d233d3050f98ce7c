import type { TSchema } from 'typebox';
import type { ValidationErrorEntry } from './endpoint.ts';
import { numberLiteral } from './number-literals.ts';
import {
  clampInteger,
  pythonFloat,
  pythonFloatRepr,
  pythonInt,
  pythonIntRepr,
  pythonStrip,
} from './python-builtins.ts';
import { EMPTY_IS_ABSENT_KEYWORD, HTTP_URL_KEYWORD } from './schemas/common.ts';

/**
 * pydantic v1 converts a value to its field's type before it checks anything else: "512" and
 * 512.7 are the int 512, 5 is the str "5", "yes" is True. This pass does the same to a request,
 * in place, driven by the same TypeBox schema Ajv then checks: each value pydantic's type
 * validator would take becomes what it would make of it; a value it would refuse stays as it is,
 * and Ajv's type error for it translates to pydantic's (`value is not a valid integer`, ...).
 *
 *   int     int as is; bool → 0/1; float → truncated; str → CPython's int(text); not NaN or ±inf
 *   float   int, float as is (NaN and ±inf too); bool → 0.0/1.0; str → CPython's float(text)
 *   str     str as is; int, float, bool → str(value): "5", "5.0", "1e+16", "True"
 *   url     as str, then stripped of whitespace (pydantic's AnyUrl)
 *   bool    bool; 0/1; "0" "off" "f" "false" "n" "no" / "1" "on" "t" "true" "y" "yes", any case
 *   enum    members only, never converted
 *   list    a list (no other iterable reaches us from JSON), each item converted as its type
 *   null    None where the field's default is None (optional, no default): as if left out
 *   empty   "" (once converted: a URL loses its spaces) where the schema says so
 *           (EMPTY_IS_ABSENT_KEYWORD): as if left out, a field or a list's item alike
 *   union   as the first branch that takes the value's type. pydantic tries the branches in
 *           order and keeps the first that validates whole; the two agree wherever the branches
 *           take different types, as in every union of the contract (str or list, member or hash).
 */

/** A converter's answer for a value its type does not take: the value stays, for Ajv to refuse. */
const REFUSED = Symbol('refused');

type Convert = (value: unknown, container: object, key: string | number) => unknown;

interface SchemaNode {
  type?: string;
  enum?: unknown[];
  anyOf?: SchemaNode[];
  items?: SchemaNode;
  properties?: Record<string, SchemaNode>;
  required?: string[];
  default?: unknown;
  exclusiveMinimum?: number;
  minimum?: number;
  exclusiveMaximum?: number;
  maximum?: number;
  [HTTP_URL_KEYWORD]?: boolean;
  [EMPTY_IS_ABSENT_KEYWORD]?: boolean;
}

/** Converts, in place, the fields of an object body (or of query parameters) to their types. */
type Coercion = (value: unknown) => void;

/** The container of a whole body, which no parser records a number literal for. */
const NO_CONTAINER = {};

export function compileCoercion(schema: TSchema): Coercion {
  const convert = converter(schema as SchemaNode);
  return (value) => {
    convert(value, NO_CONTAINER, '');
  };
}

function converter(schema: SchemaNode): Convert {
  if (schema.anyOf) return union(schema.anyOf.map(converter));
  if (schema.enum) return member(new Set(schema.enum));
  switch (schema.type) {
    case 'integer':
      return toInt;
    case 'number':
      return toFloat(schema);
    case 'string':
      return schema[HTTP_URL_KEYWORD] ? toUrl : toStr;
    case 'boolean':
      return toBool;
    case 'null':
      return (value) => (value === null ? null : REFUSED);
    case 'array':
      return list(converter(schema.items ?? {}), takesEmptyAsAbsent(schema.items ?? {}));
    case 'object':
      return object(schema);
    default:
      return () => REFUSED;
  }
}

/**
 * A model's fields. pydantic v1 lets a field whose default is None (here: optional, no default)
 * be None, so null there is the same as leaving the field out, and is left out; a field with a
 * default other than None refuses null unless its type says nullable.
 */
function object(schema: SchemaNode): Convert {
  const properties = schema.properties ?? {};
  const fields = new Map(Object.entries(properties).map(([name, field]) => [name, converter(field)]));
  const required = new Set(schema.required ?? []);
  const noneIsAbsent = new Set(
    Object.entries(properties)
      .filter(([name, field]) => !required.has(name) && !('default' in field) && !takesNull(field))
      .map(([name]) => name),
  );
  const emptyIsAbsent = new Set(
    Object.entries(properties)
      .filter(([, field]) => takesEmptyAsAbsent(field))
      .map(([name]) => name),
  );
  return (value) => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return REFUSED;
    const record = value as Record<string, unknown>;
    // for...in, unlike Object.keys, allocates nothing per body; a deleted key is not visited again.
    for (const key in record) {
      const convert = fields.get(key);
      if (!convert) continue;
      const given = record[key];
      if (given === null && noneIsAbsent.has(key)) {
        delete record[key];
        continue;
      }
      const converted = convert(given, record, key);
      if (converted === '' && emptyIsAbsent.has(key)) delete record[key];
      else if (converted !== REFUSED && !Object.is(converted, given)) record[key] = converted;
    }
    return record;
  };
}

function takesNull(schema: SchemaNode): boolean {
  return schema.type === 'null' || (schema.anyOf ?? []).some(takesNull);
}

/** Whether `""` is the schema's "not given" (itself, or one of its union's branches). */
function takesEmptyAsAbsent(schema: SchemaNode): boolean {
  return schema[EMPTY_IS_ABSENT_KEYWORD] === true || (schema.anyOf ?? []).some(takesEmptyAsAbsent);
}

/**
 * The lists that lost `""` items, each with the index its kept items had in the list as sent: an
 * error about an item names the place the client put it (`locateAsSent`).
 */
const sentIndices = new WeakMap<object, number[]>();

/** A list's items, each converted; with `skipEmpty`, the `""` items left out, in one pass. */
function list(item: Convert, skipEmpty: boolean): Convert {
  return (value) => {
    if (!Array.isArray(value)) return REFUSED;
    let kept = 0;
    let indices: number[] | undefined;
    for (let index = 0; index < value.length; index++) {
      const converted = item(value[index], value, index);
      const now = converted === REFUSED ? value[index] : converted;
      if (skipEmpty && now === '') {
        indices ??= Array.from({ length: kept }, (_, sent) => sent);
        continue;
      }
      indices?.push(index);
      value[kept++] = now;
    }
    if (indices) {
      value.length = kept;
      sentIndices.set(value, indices);
    }
    return value;
  };
}

/**
 * Puts back, in the errors about items of a body's top-level lists, the index each item had as
 * sent, where `""` items before it were left out (the request's lists nest no deeper).
 */
export function locateAsSent(detail: ValidationErrorEntry[], body: Record<string, unknown>): void {
  for (const entry of detail) {
    const [part, field, index, ...rest] = entry.loc;
    if (part !== 'body' || typeof field !== 'string' || typeof index !== 'number') continue;
    const list = body[field];
    const indices = typeof list === 'object' && list !== null ? sentIndices.get(list) : undefined;
    const sent = indices?.[index];
    if (sent !== undefined) entry.loc = [part, field, sent, ...rest];
  }
}

function union(branches: Convert[]): Convert {
  return (value, container, key) => {
    for (const branch of branches) {
      const converted = branch(value, container, key);
      if (converted !== REFUSED) return converted;
    }
    return REFUSED;
  };
}

function member(members: ReadonlySet<unknown>): Convert {
  return (value) => (members.has(value) ? value : REFUSED);
}

const toInt: Convert = (value, container, key) => {
  switch (typeof value) {
    case 'number':
      if (Number.isInteger(value)) return value === 0 ? 0 : value;
      if (Number.isFinite(value)) return Math.trunc(value) || 0;
      // An int literal beyond the doubles parses as infinity; int(inf) and int(nan) raise. Ajv,
      // which lets non-finite numbers through for the float fields, refuses NaN as an integer.
      return numberLiteral(container, key)?.float === false ? clampInteger(value) : Number.NaN;
    case 'boolean':
      return value ? 1 : 0;
    case 'string':
      return pythonInt(value) ?? REFUSED;
    default:
      return REFUSED;
  }
};

/**
 * NaN compares false with everything, so JSON Schema's bounds all pass it, while pydantic's
 * `not v > gt` refuses it at the first bound it checks (gt, ge, then lt, le). The float converter
 * hands Ajv, instead of NaN, the infinity that fails that bound alone: the same error, and the
 * value is refused either way. A float field without bounds takes NaN, as pydantic does.
 */
function toFloat(schema: SchemaNode): Convert {
  const lower = schema.exclusiveMinimum !== undefined || schema.minimum !== undefined;
  const upper = schema.exclusiveMaximum !== undefined || schema.maximum !== undefined;
  const nan = lower ? Number.NEGATIVE_INFINITY : upper ? Number.POSITIVE_INFINITY : Number.NaN;
  return (value) => {
    let number: number | undefined;
    if (typeof value === 'number') number = value;
    else if (typeof value === 'boolean') number = value ? 1 : 0;
    else if (typeof value === 'string') number = pythonFloat(value);
    if (number === undefined) return REFUSED;
    return Number.isNaN(number) ? nan : number;
  };
}

/** str(value): the parser's record says whether a number was written as a float or a huge int. */
const toStr: Convert = (value, container, key) => {
  switch (typeof value) {
    case 'string':
      return value;
    case 'boolean':
      return value ? 'True' : 'False';
    case 'number': {
      const literal = numberLiteral(container, key);
      if (literal) return literal.float ? pythonFloatRepr(value) : literal.text;
      return Number.isInteger(value) ? pythonIntRepr(value) : pythonFloatRepr(value);
    }
    default:
      return REFUSED;
  }
};

const toUrl: Convert = (value, container, key) => {
  const text = toStr(value, container, key);
  return typeof text === 'string' ? pythonStrip(text) : text;
};

const TRUE_WORDS = new Set(['1', 'on', 't', 'true', 'y', 'yes']);
const FALSE_WORDS = new Set(['0', 'off', 'f', 'false', 'n', 'no']);

const toBool: Convert = (value) => {
  switch (typeof value) {
    case 'boolean':
      return value;
    case 'number':
      return value === 1 ? true : value === 0 ? false : REFUSED;
    case 'string': {
      if (value.length > 5) return REFUSED;
      const word = value.toLowerCase();
      return TRUE_WORDS.has(word) ? true : FALSE_WORDS.has(word) ? false : REFUSED;
    }
    default:
      return REFUSED;
  }
};
