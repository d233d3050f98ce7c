import { UsageError } from './exit-codes.ts';

/**
 * Command-line flags from a JSON schema object (a request body, a query): one flag per property,
 * with its type, bounds, allowed values and default for `--help`, and the parsing of its values
 * back into the JSON the API takes. Bounds and allowed values are checked by the API, whose 422
 * the command reports against the flag, so there is one source of those rules.
 */

export interface JsonSchema {
  readonly type?: string;
  readonly enum?: readonly unknown[];
  readonly anyOf?: readonly JsonSchema[];
  readonly items?: JsonSchema;
  readonly properties?: Readonly<Record<string, JsonSchema>>;
  readonly required?: readonly string[];
  readonly default?: unknown;
  readonly description?: string;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly exclusiveMinimum?: number;
  readonly exclusiveMaximum?: number;
  readonly maxItems?: number;
  readonly minItems?: number;
  readonly pattern?: string;
  readonly format?: string;
  readonly 'x-image'?: boolean;
}

type Scalar = 'text' | 'integer' | 'number' | 'boolean' | 'json';

export interface FieldFlag {
  /** The property, e.g. `negative_prompt`. */
  readonly name: string;
  /** The flag, e.g. `--negative-prompt`. */
  readonly flag: string;
  readonly scalar: Scalar;
  /** `one`: a single value; `list`: the flag repeats; `one-or-list`: either. */
  readonly arity: 'one' | 'list' | 'one-or-list';
  readonly required: boolean;
  /** An image URL field: a local file given instead is uploaded first. */
  readonly image: boolean;
  /** Another URL (a webhook, a model file). */
  readonly url: boolean;
  readonly choices: readonly string[];
  readonly defaultValue: unknown;
  /** `> 0, ≤ 4`, `each ≥ 0, ≤ 1`, `at most 5 values`: what the API checks. */
  readonly bounds: string;
  readonly description: string;
}

export function flagOf(name: string): string {
  return `--${name.replaceAll('_', '-')}`;
}

/** The variants of a schema, without `null` (a nullable field is given or left out). */
function variants(schema: JsonSchema): JsonSchema[] {
  return (schema.anyOf ?? [schema])
    .flatMap((s) => (s.anyOf ? variants(s) : [s]))
    .filter((s) => s.type !== 'null');
}

function scalarOf(schemas: readonly JsonSchema[]): Scalar {
  const types = new Set(schemas.map((s) => s.type));
  if (types.size !== 1) return 'json';
  const [type] = types;
  if (type === 'string') return 'text';
  if (type === 'integer' || type === 'number' || type === 'boolean') return type;
  return 'json';
}

function boundsOf(schema: JsonSchema): string {
  const parts: string[] = [];
  if (schema.exclusiveMinimum !== undefined) parts.push(`> ${schema.exclusiveMinimum}`);
  if (schema.minimum !== undefined) parts.push(`≥ ${schema.minimum}`);
  if (schema.exclusiveMaximum !== undefined) parts.push(`< ${schema.exclusiveMaximum}`);
  if (schema.maximum !== undefined) parts.push(`≤ ${schema.maximum}`);
  return parts.join(', ');
}

export function fieldFlags(object: JsonSchema): FieldFlag[] {
  const required = new Set(object.required ?? []);
  return Object.entries(object.properties ?? {}).map(([name, schema]) => {
    const options = variants(schema);
    const lists = options.filter((s) => s.type === 'array');
    const ones = options.filter((s) => s.type !== 'array');
    const arity = lists.length === 0 ? 'one' : ones.length === 0 ? 'list' : 'one-or-list';
    const values = [...ones, ...lists.map((list) => list.items ?? {})].flatMap(variants);
    const bounds = [
      ...ones.map(boundsOf),
      ...lists.map((list) => {
        const each = boundsOf(list.items ?? {});
        return [
          each && `each ${each}`,
          list.maxItems !== undefined && `at most ${list.maxItems} values`,
          list.minItems !== undefined && `at least ${list.minItems}`,
        ]
          .filter(Boolean)
          .join(', ');
      }),
    ].filter(Boolean);
    const hashes = values.some((s) => s.pattern === '^[0-9a-f]{8,64}$');
    return {
      name,
      flag: flagOf(name),
      scalar: scalarOf(values),
      arity,
      required: required.has(name),
      image: values.some((s) => s['x-image'] === true),
      url: values.some((s) => s.format === 'uri'),
      choices: [...values.flatMap((s) => (s.enum ?? []).map(String)), ...(hashes ? ['a model hash'] : [])],
      defaultValue: schema.default ?? options.find((s) => s.default !== undefined)?.default,
      bounds: bounds.join('; '),
      description: schema.description ?? options.find((s) => s.description)?.description ?? '',
    };
  });
}

/** `<text>`, `<integer>...`: what the flag takes, in the usage line. */
export function placeholderOf(field: FieldFlag): string {
  if (field.scalar === 'boolean' && field.arity === 'one') return '';
  const what = field.image
    ? 'url|file'
    : field.url
      ? 'url'
      : field.choices.length > 0
        ? 'choice'
        : field.scalar;
  return field.arity === 'one' ? `<${what}>` : `<${what}>...`;
}

/** The value of one occurrence of a field's flag, as JSON. */
export function parseValue(field: FieldFlag, text: string): unknown {
  switch (field.scalar) {
    case 'integer':
    case 'number': {
      const value = Number(text);
      if (
        text.trim() === '' ||
        !Number.isFinite(value) ||
        (field.scalar === 'integer' && !Number.isInteger(value))
      ) {
        throw new UsageError(
          `${field.flag} takes ${field.scalar === 'integer' ? 'a whole number' : 'a number'}, not "${text}"`,
        );
      }
      return value;
    }
    case 'boolean':
      if (text === 'true' || text === 'false') return text === 'true';
      throw new UsageError(`${field.flag} takes true or false, not "${text}"`);
    case 'json':
      try {
        return JSON.parse(text);
      } catch {
        throw new UsageError(`${field.flag} takes JSON, not "${text}"`);
      }
    default:
      return text;
  }
}

/** The JSON value of a field from every occurrence of its flag. */
export function flagValue(field: FieldFlag, texts: readonly string[]): unknown {
  const values = texts.map((text) => parseValue(field, text));
  if (field.arity === 'list') return values;
  if (field.arity === 'one-or-list' && values.length > 1) return values;
  if (values.length > 1)
    throw new UsageError(`${field.flag} was given ${values.length} times; it takes one value`);
  return values[0];
}
