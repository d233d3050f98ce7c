/**
 * The rows of a parameters table, from a request schema whose references are resolved: the
 * docs pages' tables (from openapi.json) and the playground's form (from the contract's own
 * schemas) label each field the same way.
 */

export interface JsonSchema {
  $ref?: string;
  type?: string | string[];
  title?: string;
  description?: string;
  default?: unknown;
  enum?: unknown[];
  const?: unknown;
  format?: string;
  pattern?: string;
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  nullable?: boolean;
  examples?: unknown[];
}

export interface ParameterRow {
  name: string;
  type: string;
  required: boolean;
  defaultValue: string;
  bounds: string;
  allowed: string;
  description: string;
}

/** Answers the schema a `$ref` names; schemas without references need none. */
export type Resolve = (schema: JsonSchema) => JsonSchema;

function variants(schema: JsonSchema, resolve: Resolve): JsonSchema[] {
  const s = resolve(schema);
  const list = s.anyOf ?? s.oneOf;
  return list ? list.flatMap((v) => variants(v, resolve)) : [s];
}

function typeLabel(schema: JsonSchema, resolve: Resolve): string {
  const labels = variants(schema, resolve).map((v) => {
    if (v.const !== undefined) return JSON.stringify(v.const);
    const types = Array.isArray(v.type) ? v.type : v.type ? [v.type] : [];
    return types
      .map((t) => {
        if (t === 'array') return `${v.items ? typeLabel(v.items, resolve) : 'any'}[]`;
        if (t === 'string' && v.format === 'binary') return 'file';
        if (t === 'string' && v.format === 'uri') return 'URL';
        return t;
      })
      .join(' | ');
  });
  const unique = [...new Set(labels.filter(Boolean))];
  return unique.join(' | ') || 'any';
}

function num(n: number): string {
  return String(n);
}

/** "> 0, ≤ 4" style bounds, including those of list items ("each > -10, ≤ 10"). */
function boundsLabel(schema: JsonSchema, resolve: Resolve): string {
  const parts: string[] = [];
  for (const v of variants(schema, resolve)) {
    const own: string[] = [];
    if (v.exclusiveMinimum !== undefined) own.push(`> ${num(v.exclusiveMinimum)}`);
    if (v.minimum !== undefined) own.push(`≥ ${num(v.minimum)}`);
    if (v.exclusiveMaximum !== undefined) own.push(`< ${num(v.exclusiveMaximum)}`);
    if (v.maximum !== undefined) own.push(`≤ ${num(v.maximum)}`);
    if (v.maxLength !== undefined && v.format !== 'uri') own.push(`at most ${v.maxLength} characters`);
    if (v.minItems !== undefined) own.push(`at least ${v.minItems} items`);
    if (v.maxItems !== undefined) own.push(`at most ${v.maxItems} items`);
    if (v.pattern && v.type === 'string' && !v.enum) own.push(`pattern ${v.pattern}`);
    if (v.items) {
      const inner = boundsLabel(v.items, resolve);
      if (inner) own.push(`each ${inner}`);
    }
    if (own.length) parts.push(own.join(', '));
  }
  return [...new Set(parts)].join('; ');
}

function allowedLabel(schema: JsonSchema, resolve: Resolve): string {
  const values: string[] = [];
  for (const v of variants(schema, resolve)) {
    if (v.enum) values.push(...v.enum.map(String));
    if (v.items) {
      const inner = allowedLabel(v.items, resolve);
      if (inner) values.push(inner);
    }
    if (v.pattern && v.description?.toLowerCase().includes('hash')) values.push('{hash}');
  }
  return [...new Set(values)].join(', ');
}

function defaultLabel(schema: JsonSchema, resolve: Resolve): string {
  const s = resolve(schema);
  const value = s.default ?? variants(s, resolve).find((v) => v.default !== undefined)?.default;
  return value === undefined ? '' : JSON.stringify(value);
}

function descriptionOf(schema: JsonSchema, resolve: Resolve): string {
  const s = resolve(schema);
  if (s.description) return s.description;
  const fromVariant = variants(s, resolve).find((v) => v.description && v.type !== 'null')?.description;
  return fromVariant ?? '';
}

export function parameterRows(schema: JsonSchema, resolve: Resolve = (s) => s): ParameterRow[] {
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties ?? {}).map(([name, prop]) => ({
    name,
    type: typeLabel(prop, resolve),
    required: required.has(name),
    defaultValue: defaultLabel(prop, resolve),
    bounds: boundsLabel(prop, resolve),
    allowed: allowedLabel(prop, resolve),
    description: descriptionOf(prop, resolve),
  }));
}
