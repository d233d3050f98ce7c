/**
 * Requests read off an OpenAPI document, for the conformance test: for every operation the
 * requests the document accepts (its example where it has one, and that cut to its required
 * fields) and variants it refuses, each naming the field that makes it invalid. Everything comes
 * from the document's own schemas; a small reader of JSON Schema (`accepts`) confirms that each
 * variant really is refused by the document, so the test checks the server against the document,
 * not against itself.
 *
 * The reader knows the keywords the API's document uses (type, enum, const, anyOf, allOf with
 * if/then, numeric bounds, lengths, pattern, the uri format and x-http-url, items, required, and
 * x-empty-is-absent: `""` there is as if left out). It
 * reads types strictly, so its refusals are values no conversion rescues: the API, as pydantic v1,
 * takes "5" for an integer and 5 for a string, which a document's types do not say.
 * Anything else throws, so a schema the generator cannot read fails the test instead of being
 * skipped.
 */

export type Schema = { readonly [keyword: string]: unknown };

interface Parameter {
  readonly name: string;
  readonly in: string;
  readonly required?: boolean;
  readonly schema: Schema;
}

interface Operation {
  readonly parameters?: readonly Parameter[];
  readonly requestBody?: { readonly content: Record<string, { schema: Schema; example?: unknown }> };
}

export interface OpenApiDocument {
  readonly paths: Record<string, Record<string, Operation>>;
  readonly components: { readonly schemas: Record<string, Schema> };
}

/** A multipart part: a file (a small PNG) or a text value. */
export type FormPart = { readonly name: string } & ({ readonly file: true } | { readonly text: string });

export interface ApiCall {
  readonly method: string;
  /** The path with its parameters filled in, and the query string. */
  readonly url: string;
  readonly json?: unknown;
  readonly form?: readonly FormPart[];
}

export interface InvalidCall extends ApiCall {
  /** What is wrong, for failure messages. */
  readonly what: string;
  /** Where the document locates the fault: ["body" | "query" | "path", field]. */
  readonly loc: readonly [string, string];
}

export interface OperationCases {
  /** e.g. `POST /sd/text2image/v1`. */
  readonly operation: string;
  /** Requests the document accepts: the example (or a sample), and that body cut to its required fields. */
  readonly valid: readonly ApiCall[];
  readonly invalid: readonly InvalidCall[];
  /** Fields (body properties and parameters) for which no refused value exists, e.g. a free string path id. */
  readonly unrefusable: readonly string[];
}

/** The contract's extension: `""` is as if the field were left out, or the item not in its list. */
const EMPTY = 'x-empty-is-absent';

/** The JSON Schema keywords `accepts` reads (annotations included); any other throws. */
const KEYWORDS = new Set([
  ...['type', 'enum', 'const', 'anyOf', 'allOf', 'if', 'then', 'properties', 'required', 'items'],
  ...['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'minLength', 'maxLength'],
  ...['minItems', 'maxItems', 'pattern', 'format', 'x-http-url', 'x-image', EMPTY],
  ...['title', 'description', 'default', 'examples'],
]);
const FORMATS = new Set(['uri', 'binary']);

const UNKNOWN_MEMBER = 'not-a-member';
const NOT_A_URL = 'not a url';

export function requestCases(doc: OpenApiDocument, options: { imageUrl: string }): OperationCases[] {
  const reader = new SchemaReader(doc, options.imageUrl);
  const cases: OperationCases[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      cases.push(operationCases(reader, method.toUpperCase(), path, operation));
    }
  }
  return cases;
}

function operationCases(reader: SchemaReader, method: string, path: string, operation: Operation) {
  // Headers (Prefer, Idempotency-Key, Cancel-After, Last-Event-ID) are HTTP's own syntax, read by the handlers
  // rather than by a schema: the task-control tests cover them.
  const parameters = (operation.parameters ?? []).filter((parameter) => parameter.in !== 'header');
  const values: Record<string, string> = {};
  for (const parameter of parameters) {
    if (parameter.in === 'path' || parameter.required)
      values[parameter.name] = reader.sampleText(parameter.schema);
  }
  const url = (overrides: Record<string, string | undefined>) => {
    const merged = { ...values, ...overrides };
    let filled = path;
    const query = new URLSearchParams();
    for (const parameter of parameters) {
      const value = merged[parameter.name];
      if (parameter.in === 'path')
        filled = filled.replace(`{${parameter.name}}`, encodeURIComponent(value ?? ''));
      else if (value !== undefined) query.set(parameter.name, value);
    }
    const search = query.toString();
    return search ? `${filled}?${search}` : filled;
  };

  const invalid: InvalidCall[] = [];
  const unrefusable: string[] = [];
  for (const parameter of parameters) {
    const part = parameter.in === 'path' ? 'path' : 'query';
    const loc = [part, parameter.name] as const;
    const before = invalid.length;
    if (part === 'query' && parameter.required) {
      invalid.push({
        method,
        url: url({ [parameter.name]: undefined }),
        what: `${parameter.name} missing`,
        loc,
      });
    }
    for (const bad of reader.refusedTexts(parameter.schema)) {
      invalid.push({
        method,
        url: url({ [parameter.name]: bad.value }),
        what: `${parameter.name} ${bad.what}`,
        loc,
      });
    }
    if (invalid.length === before) unrefusable.push(`${part} ${parameter.name}`);
  }

  const content = operation.requestBody?.content ?? {};
  const json = content['application/json'];
  const multipart = content['multipart/form-data'];
  const base: ApiCall = { method, url: url({}) };
  let valid: ApiCall[] = [base];
  if (json) {
    const body = (json.example ?? reader.sample(json.schema)) as Record<string, unknown>;
    const requiredOnly = reader.requiredOnly(json.schema, body);
    for (const each of [body, requiredOnly]) {
      if (!reader.accepts(json.schema, each)) throw new Error(`${method} ${path}: a valid body is refused`);
    }
    valid = [
      { ...base, json: body },
      { ...base, json: requiredOnly },
    ];
    for (const variant of reader.refusedBodies(json.schema, body)) {
      invalid.push({ ...base, json: variant.body, what: variant.what, loc: ['body', variant.field] });
    }
    for (const field of reader.fieldsWithoutRefusal(json.schema, invalid)) unrefusable.push(`body ${field}`);
  } else if (multipart) {
    const form = reader.sampleForm(multipart.schema);
    valid = [{ ...base, form }];
    for (const variant of reader.refusedForms(multipart.schema, form)) {
      invalid.push({ ...base, form: variant.form, what: variant.what, loc: ['body', variant.field] });
    }
  }
  return { operation: `${method} ${path}`, valid, invalid, unrefusable };
}

type Refused = { what: string; value: unknown };

class SchemaReader {
  constructor(
    private readonly doc: OpenApiDocument,
    private readonly imageUrl: string,
  ) {}

  resolve(schema: Schema): Schema {
    const ref = schema.$ref;
    if (typeof ref !== 'string') return schema;
    const name = ref.replace('#/components/schemas/', '');
    const target = this.doc.components.schemas[name];
    if (!target) throw new Error(`unresolvable $ref ${ref}`);
    return this.resolve(target);
  }

  /** The alternatives a value may take: anyOf flattened, $refs resolved. */
  branches(schema: Schema): Schema[] {
    const resolved = this.resolve(schema);
    const anyOf = resolved.anyOf as Schema[] | undefined;
    return anyOf ? anyOf.flatMap((branch) => this.branches(branch)) : [resolved];
  }

  /** Whether the document accepts `value` for `schema`. */
  accepts(schema: Schema, value: unknown): boolean {
    const s = this.resolve(schema);
    const unknown = Object.keys(s).filter((keyword) => !KEYWORDS.has(keyword));
    if (unknown.length > 0 || (s.format !== undefined && !FORMATS.has(String(s.format)))) {
      throw new Error(
        `the reader does not know ${[...unknown, s.format].join(', ')} in ${JSON.stringify(s)}`,
      );
    }
    if (value === '' && s[EMPTY] === true) return true;
    const anyOf = s.anyOf as Schema[] | undefined;
    if (anyOf && !anyOf.some((branch) => this.accepts(branch, value))) return false;
    for (const part of (s.allOf as Schema[] | undefined) ?? []) if (!this.accepts(part, value)) return false;
    if (s.if !== undefined && this.accepts(s.if as Schema, value) && !this.accepts(s.then as Schema, value)) {
      return false;
    }
    if ('const' in s && value !== s.const) return false;
    if (Array.isArray(s.enum) && !s.enum.includes(value)) return false;
    if (typeof s.type === 'string' && !hasType(value, s.type)) return false;
    if (typeof value === 'number' && !withinBounds(s, value)) return false;
    if (typeof value === 'string') {
      const length = [...value].length;
      if (typeof s.minLength === 'number' && length < s.minLength) return false;
      if (typeof s.maxLength === 'number' && length > s.maxLength) return false;
      if (typeof s.pattern === 'string' && !new RegExp(s.pattern, 'u').test(value)) return false;
      if ((s.format === 'uri' || s['x-http-url'] === true) && !isHttpUrl(value)) return false;
    }
    if (Array.isArray(value)) {
      const items = s.items as Schema | undefined;
      const skipsEmpty = items !== undefined && this.resolve(items)[EMPTY] === true;
      const kept = skipsEmpty ? value.filter((item) => item !== '') : value;
      if (typeof s.minItems === 'number' && kept.length < s.minItems) return false;
      if (typeof s.maxItems === 'number' && kept.length > s.maxItems) return false;
      if (items && !kept.every((item) => this.accepts(items, item))) return false;
    }
    if (isObject(value)) {
      for (const name of (s.required as string[] | undefined) ?? []) if (!(name in value)) return false;
      const properties = (s.properties as Record<string, Schema> | undefined) ?? {};
      for (const [name, property] of Object.entries(properties)) {
        if (name in value && !this.accepts(property, value[name])) return false;
      }
    }
    return true;
  }

  /** A value the document accepts for `schema`. */
  sample(schema: Schema): unknown {
    const s = this.resolve(schema);
    const value = this.propose(s);
    if (!this.accepts(s, value)) throw new Error(`cannot sample a value for ${JSON.stringify(s)}`);
    return value;
  }

  private propose(s: Schema): unknown {
    if (s.anyOf) {
      const branch = this.branches(s).find((b) => b.type !== 'null');
      return branch ? this.sample(branch) : null;
    }
    if ('const' in s) return s.const;
    if (Array.isArray(s.enum)) return s.enum[0];
    switch (s.type) {
      case 'string':
        if (s.format === 'uri' || s['x-http-url'] === true) return this.imageUrl;
        if (typeof s.pattern === 'string') {
          const fits = ['deadbeef', '#abcdef'].find((text) =>
            new RegExp(s.pattern as string, 'u').test(text),
          );
          if (!fits) throw new Error(`no sample matches the pattern ${s.pattern}`);
          return fits;
        }
        return 'text';
      case 'integer':
      case 'number':
        return inside(s);
      case 'boolean':
        return false;
      case 'array': {
        const count = Math.max(1, Number(s.minItems ?? 0));
        return Array.from({ length: count }, () => this.sample(s.items as Schema));
      }
      case 'object': {
        const properties = (s.properties as Record<string, Schema> | undefined) ?? {};
        const out: Record<string, unknown> = {};
        for (const name of (s.required as string[] | undefined) ?? [])
          out[name] = this.sample(properties[name]!);
        return out;
      }
      default:
        throw new Error(`cannot sample a value for ${JSON.stringify(s)}`);
    }
  }

  /** Values the document refuses for `schema`, each with what is wrong with it. */
  refused(schema: Schema): Refused[] {
    const s = this.resolve(schema);
    const branches = this.branches(s);
    const types = new Set(branches.map((b) => b.type));
    const candidates: Refused[] = [];
    // One value of a JSON type no alternative takes, nor converts: the API reads values as
    // pydantic v1 does, so a number is a string field's text and "5" an integer field's 5.
    if (!types.has('string')) candidates.push({ what: 'of the wrong type (a string)', value: 'text' });
    else candidates.push({ what: 'of the wrong type (an object)', value: { unexpected: true } });
    for (const branch of branches) {
      if (branch.type === 'integer' || branch.type === 'number') {
        candidates.push(...justOutside(branch));
        if (branch.type === 'integer') candidates.push({ what: 'a fraction, as text', value: '1.5' });
      }
      if (branch.type === 'string') {
        if (Array.isArray(branch.enum)) candidates.push({ what: 'an unknown member', value: UNKNOWN_MEMBER });
        if (typeof branch.pattern === 'string')
          candidates.push({ what: 'not matching its pattern', value: 'not matching!' });
        if (branch.format === 'uri' || branch['x-http-url'] === true)
          candidates.push({ what: 'not a URL', value: NOT_A_URL });
        if (typeof branch.minLength === 'number' && branch.minLength > 0) {
          candidates.push({ what: 'too short', value: 'x'.repeat(branch.minLength - 1) });
        }
        if (typeof branch.maxLength === 'number') {
          const long = `${this.imageUrl}?${'a'.repeat(branch.maxLength)}`;
          candidates.push({ what: 'too long', value: long.slice(0, branch.maxLength + 1) });
        }
      }
      if (branch.type === 'array') {
        const items = branch.items as Schema;
        const item = () => this.sample(items);
        if (typeof branch.minItems === 'number' && branch.minItems > 0) {
          candidates.push({
            what: 'with too few items',
            value: Array.from({ length: branch.minItems - 1 }, item),
          });
        }
        if (typeof branch.maxItems === 'number') {
          candidates.push({
            what: 'with too many items',
            value: Array.from({ length: branch.maxItems + 1 }, item),
          });
        }
        const filler = Array.from({ length: Math.max(0, Number(branch.minItems ?? 0) - 1) }, item);
        for (const bad of this.refused(items)) {
          candidates.push({ what: `with an item ${bad.what}`, value: [bad.value, ...filler] });
        }
      }
    }
    const seen = new Set<string>();
    return candidates.filter((candidate) => {
      const key = JSON.stringify(candidate.value);
      if (seen.has(key) || this.accepts(s, candidate.value)) return false;
      seen.add(key);
      return true;
    });
  }

  /** A query or path value the document accepts, as text. */
  sampleText(schema: Schema): string {
    const value = this.sample(schema);
    return typeof value === 'string' ? value : JSON.stringify(value);
  }

  /** Query or path values the document refuses: parameters arrive as text, read as their type. */
  refusedTexts(schema: Schema): { what: string; value: string }[] {
    return this.refused(schema)
      .filter((bad) => typeof bad.value === 'string' || typeof bad.value === 'number')
      .map((bad) => ({ what: bad.what, value: String(bad.value) }))
      .filter((bad) => !this.accepts(schema, readText(this.branches(schema), bad.value)));
  }

  /** Bodies the document refuses, each differing from `valid` in one field. */
  refusedBodies(
    schema: Schema,
    valid: Record<string, unknown>,
  ): { what: string; field: string; body: unknown }[] {
    const s = this.resolve(schema);
    const properties = (s.properties as Record<string, Schema> | undefined) ?? {};
    const out: { what: string; field: string; body: unknown }[] = [];
    for (const field of (s.required as string[] | undefined) ?? []) {
      const { [field]: _gone, ...rest } = structuredClone(valid);
      out.push({ what: `${field} missing`, field, body: rest });
    }
    for (const [field, property] of Object.entries(properties)) {
      for (const bad of this.refused(property)) {
        out.push({
          what: `${field} ${bad.what}`,
          field,
          body: { ...structuredClone(valid), [field]: bad.value },
        });
      }
    }
    // Fields required only when others hold some values (JSON Schema if/then).
    for (const rule of (s.allOf as Schema[] | undefined) ?? []) {
      if (rule.if === undefined) continue;
      const body = this.satisfying(rule.if as Schema, properties, structuredClone(valid));
      for (const field of ((rule.then as Schema).required as string[] | undefined) ?? []) {
        const { [field]: _gone, ...rest } = body;
        out.push({ what: `${field} missing where ${JSON.stringify(rule.if)} holds`, field, body: rest });
      }
    }
    return out.filter((variant) => !this.accepts(s, variant.body));
  }

  /** `body` cut to the fields the document requires of it, those an if/then requires included. */
  requiredOnly(schema: Schema, body: Record<string, unknown>): Record<string, unknown> {
    const s = this.resolve(schema);
    const keep = new Set((s.required as string[] | undefined) ?? []);
    const cut = () =>
      Object.fromEntries(Object.entries(structuredClone(body)).filter(([field]) => keep.has(field)));
    for (const rule of (s.allOf as Schema[] | undefined) ?? []) {
      if (rule.if === undefined || !this.accepts(rule.if as Schema, cut())) continue;
      for (const field of ((rule.then as Schema).required as string[] | undefined) ?? []) keep.add(field);
    }
    return cut();
  }

  /** `body` changed so that it meets an if-condition: each named property takes a value both allow. */
  private satisfying(condition: Schema, properties: Record<string, Schema>, body: Record<string, unknown>) {
    const wanted = (condition.properties as Record<string, Schema> | undefined) ?? {};
    for (const [name, want] of Object.entries(wanted)) {
      const property = properties[name];
      if (!property) throw new Error(`the condition names ${name}, which the schema does not have`);
      const candidates = [body[name], ...((want.enum as unknown[] | undefined) ?? []), this.sample(property)];
      const fits = candidates.find((value) => this.accepts(want, value) && this.accepts(property, value));
      if (fits === undefined) throw new Error(`no value of ${name} meets ${JSON.stringify(want)}`);
      body[name] = fits;
    }
    if (!this.accepts(condition, body))
      throw new Error(`cannot meet the condition ${JSON.stringify(condition)}`);
    return body;
  }

  /** Body fields none of the invalid calls located. */
  fieldsWithoutRefusal(schema: Schema, invalid: readonly InvalidCall[]): string[] {
    const properties = Object.keys((this.resolve(schema).properties as object | undefined) ?? {});
    return properties.filter(
      (field) => !invalid.some((call) => call.loc[0] === 'body' && call.loc[1] === field),
    );
  }

  /** A multipart body the document accepts: a file for each binary field, text for the others. */
  sampleForm(schema: Schema): FormPart[] {
    const s = this.resolve(schema);
    const properties = (s.properties as Record<string, Schema> | undefined) ?? {};
    const parts: FormPart[] = [];
    for (const name of (s.required as string[] | undefined) ?? []) {
      const property = this.resolve(properties[name]!);
      const binary =
        isBinary(property) || (property.type === 'array' && isBinary(this.resolve(property.items as Schema)));
      const count = property.type === 'array' ? Math.max(1, Number(property.minItems ?? 0)) : 1;
      for (let n = 0; n < count; n++) {
        parts.push(binary ? { name, file: true } : { name, text: this.sampleText(property) });
      }
    }
    return parts;
  }

  /** Multipart bodies the document refuses: a required field missing, or text where a file is due. */
  refusedForms(
    schema: Schema,
    valid: readonly FormPart[],
  ): { what: string; field: string; form: FormPart[] }[] {
    const s = this.resolve(schema);
    const out: { what: string; field: string; form: FormPart[] }[] = [];
    for (const field of (s.required as string[] | undefined) ?? []) {
      const others = valid.filter((part) => part.name !== field);
      out.push({ what: `${field} missing`, field, form: [...others, { name: 'unrelated', text: 'x' }] });
      if (valid.some((part) => part.name === field && 'file' in part)) {
        out.push({
          what: `${field} sent as text, not a file`,
          field,
          form: [...others, { name: field, text: 'x' }],
        });
      }
    }
    return out;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isBinary(schema: Schema): boolean {
  return schema.type === 'string' && schema.format === 'binary';
}

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isObject(value);
    case 'null':
      return value === null;
    default:
      throw new Error(`unknown JSON type ${type}`);
  }
}

/** The http(s) URLs the document's `uri` format and x-http-url describe. */
function isHttpUrl(text: string): boolean {
  return /^https?:\/\/[^\s/?#:@]+(?::\d{1,5})?(?:[/?#]\S*)?$/i.test(text);
}

function withinBounds(s: Schema, value: number): boolean {
  if (typeof s.minimum === 'number' && value < s.minimum) return false;
  if (typeof s.exclusiveMinimum === 'number' && value <= s.exclusiveMinimum) return false;
  if (typeof s.maximum === 'number' && value > s.maximum) return false;
  if (typeof s.exclusiveMaximum === 'number' && value >= s.exclusiveMaximum) return false;
  return true;
}

/** The least number a numeric schema takes, an exclusive bound stepped inside by `step`. */
export function lowest(s: Schema, step: number): number | undefined {
  if (typeof s.minimum === 'number') return s.minimum;
  return typeof s.exclusiveMinimum === 'number' ? s.exclusiveMinimum + step : undefined;
}

/** The greatest number a numeric schema takes, an exclusive bound stepped inside by `step`. */
export function highest(s: Schema, step: number): number | undefined {
  if (typeof s.maximum === 'number') return s.maximum;
  return typeof s.exclusiveMaximum === 'number' ? s.exclusiveMaximum - step : undefined;
}

/** A number inside a numeric schema's bounds. */
function inside(s: Schema): number {
  const step = s.type === 'integer' ? 1 : 0.5;
  const low = lowest(s, step) ?? 1;
  const value = s.type === 'integer' ? Math.ceil(low) : low;
  return withinBounds(s, value) ? value : (Number(s.maximum ?? s.exclusiveMaximum) + low) / 2;
}

/** The values just outside each bound of a numeric schema. */
function justOutside(s: Schema): Refused[] {
  const step = s.type === 'integer' ? 1 : 0.001;
  const out: Refused[] = [];
  if (typeof s.minimum === 'number')
    out.push({ what: `below its minimum ${s.minimum}`, value: s.minimum - step });
  if (typeof s.exclusiveMinimum === 'number') {
    out.push({ what: `at its exclusive minimum ${s.exclusiveMinimum}`, value: s.exclusiveMinimum });
  }
  if (typeof s.maximum === 'number')
    out.push({ what: `above its maximum ${s.maximum}`, value: s.maximum + step });
  if (typeof s.exclusiveMaximum === 'number') {
    out.push({ what: `at its exclusive maximum ${s.exclusiveMaximum}`, value: s.exclusiveMaximum });
  }
  return out;
}

/** How a parameter's text reads against its schema's alternatives: a number where one is allowed. */
function readText(branches: readonly Schema[], text: string): unknown {
  const numeric = branches.some((b) => b.type === 'integer' || b.type === 'number');
  if (numeric && /^[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?$/i.test(text)) return Number(text);
  return text;
}
