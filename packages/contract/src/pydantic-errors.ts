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

/**
 * JSON pointers → pydantic locations, remembering each parent: the items of one list share their
 * parent's location, so a list of 100,000 failing items splits its pointer once.
 */
class Locations {
  private readonly parents = new Map<string, readonly (string | number)[]>([['', []]]);

  of(pointer: string): (string | number)[] {
    if (pointer === '') return [];
    const cut = pointer.lastIndexOf('/');
    const parent = pointer.slice(0, cut);
    let above = this.parents.get(parent);
    if (above === undefined) {
      above = this.of(parent);
      this.parents.set(parent, above);
    }
    const key = pointer
      .slice(cut + 1)
      .replace(/~1/g, '/')
      .replace(/~0/g, '~');
    // Below the top level our bodies hold only arrays, so a numeric segment is a list index.
    const isIndex = above.length > 0 && key.length > 0 && key.length < 16 && /^\d+$/.test(key);
    return [...above, isIndex ? Number(key) : key];
  }
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

/**
 * describe(), once per failing schema: the items of a list fail the same schema alike. Words
 * equal in text share one id, so duplicates are found without writing each entry out.
 */
class Words {
  private readonly bySchema = new Map<string, Said | undefined>();
  private readonly ids = new Map<string, number>();

  of(error: ErrorObject): Said | undefined {
    // A URL's words depend on the URL itself; the others on the schema (and whether data is null).
    if (error.keyword === HTTP_URL_KEYWORD) return this.said(describe(error));
    const slot = `${error.schemaPath}\u0000${error.data === null}`;
    if (this.bySchema.has(slot)) return this.bySchema.get(slot);
    const said = this.said(describe(error));
    this.bySchema.set(slot, said);
    return said;
  }

  private said(words: Omit<ValidationErrorEntry, 'loc'> | undefined): Said | undefined {
    if (!words) return undefined;
    const text = JSON.stringify(words);
    let id = this.ids.get(text);
    if (id === undefined) {
      id = this.ids.size;
      this.ids.set(text, id);
    }
    return { words, id };
  }
}

interface Said {
  readonly words: Omit<ValidationErrorEntry, 'loc'>;
  readonly id: number;
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
 *
 * The hiding errors are indexed once, so each error is judged by a few set lookups: a body of
 * 50,000 failing items costs 50,000 lookups, not 50,000 scans of the whole list.
 */
class Shadows {
  /** `instancePath` + schema object of each type error that hides its schema's other checks. */
  private readonly typeErrors = new Set<string>();
  /** The same key for each string length error (they hide the URL check). */
  private readonly lengthErrors = new Set<string>();
  /** `instancePath` of each list whose length check failed. */
  private readonly sizedLists = new Set<string>();

  constructor(errors: readonly ErrorObject[]) {
    for (const error of errors) {
      switch (error.keyword) {
        case 'type':
          if (!isNullBranch(error) && !isEnumTypeError(error)) this.typeErrors.add(slotOf(error));
          break;
        case 'minLength':
        case 'maxLength':
          this.lengthErrors.add(slotOf(error));
          break;
        case 'minItems':
        case 'maxItems':
          this.sizedLists.add(error.instancePath);
          break;
      }
    }
  }

  hides(error: ErrorObject): boolean {
    if (error.keyword === HTTP_URL_KEYWORD && this.lengthErrors.has(slotOf(error))) return true;
    if (error.keyword !== 'type' && this.typeErrors.size > 0 && this.typeErrors.has(slotOf(error)))
      return true;
    if (this.sizedLists.size === 0) return false;
    // Every enclosing value of the error's, from its parent up to the body itself ("").
    let path = error.instancePath;
    for (let cut = path.lastIndexOf('/'); cut !== -1; cut = path.lastIndexOf('/')) {
      path = path.slice(0, cut);
      if (this.sizedLists.has(path)) return true;
    }
    return false;
  }
}

/** The value and the schema object an error belongs to. */
function slotOf(error: ErrorObject): string {
  return `${error.instancePath}\u0000${schemaObjectPath(error)}`;
}

/**
 * The most entries a 422 lists: the first ones in pydantic's order. No client of the original
 * ever sent a body with more wrong values than this; a body built to fail in 100,000 places would
 * otherwise get an answer 50 times its own size, and the API would spend its time writing it.
 */
export const MAX_DETAIL_ENTRIES = 1000;

/**
 * Turns Ajv's errors (compiled with allErrors and verbose) into pydantic v1's detail list.
 * `fieldOrder` lists the model's fields in declaration order; entries are sorted by it. A null
 * sent for an enumeration answers pydantic's `none is not an allowed value` once. At most
 * {@link MAX_DETAIL_ENTRIES} entries are answered.
 */
export function toPydanticDetail(
  errors: readonly ErrorObject[],
  fieldOrder: readonly string[],
  where: RequestPart = 'body',
): ValidationErrorEntry[] {
  return pydanticEntries(errors, fieldOrder, where)
    .slice(0, MAX_DETAIL_ENTRIES)
    .map(({ entry }) => entry);
}

/** A detail entry with the rank of its field in the model (fields it does not know rank last). */
export interface RankedEntry {
  readonly entry: ValidationErrorEntry;
  readonly field: number;
}

/** Every entry of the detail list, in its order, each with its field's rank. */
export function pydanticEntries(
  errors: readonly ErrorObject[],
  fieldOrder: readonly string[],
  where: RequestPart = 'body',
): RankedEntry[] {
  const entries: ValidationErrorEntry[] = [];
  const seen = new Set<string>();
  const shadows = new Shadows(errors);
  const locations = new Locations();
  const words = new Words();
  for (const error of errors) {
    if (isNullBranch(error) || isEnumTypeError(error) || shadows.hides(error)) continue;
    const said = words.of(error);
    if (!said) continue;
    const missing =
      error.keyword === 'required'
        ? String((error.params as { missingProperty: string }).missingProperty)
        : undefined;
    // Entries equal in location and words are one entry (anyOf branches may fail alike).
    const key = `${error.instancePath}\u0000${missing ?? ''}\u0000${said.id}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const loc = locations.of(error.instancePath);
    if (missing !== undefined) loc.push(missing);
    const entry: ValidationErrorEntry = { loc: [where, ...loc], msg: said.words.msg, type: said.words.type };
    if (said.words.ctx) entry.ctx = said.words.ctx;
    entries.push(entry);
  }
  const ranks = new Map(fieldOrder.map((field, index) => [field, index]));
  const rank = (field: string | number | undefined) => ranks.get(String(field)) ?? fieldOrder.length;
  return entries
    .map((entry, arrival) => ({ entry, arrival, field: rank(entry.loc[1]) }))
    .sort((a, b) => a.field - b.field || compareLoc(a.entry.loc, b.entry.loc) || a.arrival - b.arrival);
}

/** Within one field: list indexes in ascending order. */
function compareLoc(a: readonly (string | number)[], b: readonly (string | number)[]): number {
  for (let i = 2; i < Math.min(a.length, b.length); i++) {
    const x = a[i];
    const y = b[i];
    if (typeof x === 'number' && typeof y === 'number' && x !== y) return x - y;
  }
  return 0;
}
