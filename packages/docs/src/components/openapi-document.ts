/**
 * Reads the contract's OpenAPI document, generated at build time into .generated/openapi.json by
 * the `prebuild`/`prestart` scripts (never copied by hand), and turns request schemas into the
 * rows of a parameters table.
 */
import openapi from '@site/.generated/openapi.json';

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

interface MediaType {
  schema?: JsonSchema;
  example?: unknown;
  examples?: Record<string, { value?: unknown }>;
}

export interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  requestBody?: { content?: Record<string, MediaType> };
  parameters?: { name: string; in: string; required?: boolean; description?: string; schema?: JsonSchema }[];
  responses?: Record<string, { description?: string; content?: Record<string, MediaType> }>;
}

interface Document {
  servers?: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, JsonSchema> };
}

const doc = openapi as unknown as Document;

export function operation(path: string, method = 'post'): Operation {
  const op = doc.paths[path]?.[method];
  if (!op) throw new Error(`The OpenAPI document has no ${method.toUpperCase()} ${path}`);
  return op;
}

/** The status path of a task-creating operation, if the document has one (not its `/events` stream). */
export function statusPathOf(path: string): string | undefined {
  return Object.keys(doc.paths).find(
    (p) => p.startsWith(`${path}/status/{`) && p.endsWith('}') && doc.paths[p]?.get,
  );
}

export function resolve(schema: JsonSchema | undefined): JsonSchema {
  let s = schema ?? {};
  for (let depth = 0; s.$ref && depth < 10; depth++) {
    const name = s.$ref.replace('#/components/schemas/', '');
    const target = doc.components?.schemas?.[name];
    if (!target) throw new Error(`Unresolved $ref ${s.$ref}`);
    s = { ...target, ...(s.description ? { description: s.description } : {}) };
  }
  if (s.allOf) {
    const merged: JsonSchema = { ...s, allOf: undefined, properties: {}, required: [] };
    for (const part of s.allOf.map(resolve)) {
      Object.assign(merged.properties!, part.properties);
      merged.required!.push(...(part.required ?? []));
    }
    return merged;
  }
  return s;
}

export function requestMedia(
  path: string,
  method = 'post',
): { contentType: string; media: MediaType } | undefined {
  const content = operation(path, method).requestBody?.content;
  if (!content) return undefined;
  const [contentType, media] = Object.entries(content)[0] ?? [];
  return contentType && media ? { contentType, media } : undefined;
}

export function requestSchema(path: string, method = 'post'): JsonSchema | undefined {
  const media = requestMedia(path, method)?.media;
  return media?.schema ? resolve(media.schema) : undefined;
}

/** The example request body the contract ships for this operation, if any. */
export function requestExample(path: string, method = 'post'): Record<string, unknown> | undefined {
  const media = requestMedia(path, method)?.media;
  if (!media) return undefined;
  const value =
    media.example ??
    Object.values(media.examples ?? {})[0]?.value ??
    (media.schema ? resolve(media.schema).examples?.[0] : undefined);
  return value && typeof value === 'object' ? (value as Record<string, unknown>) : undefined;
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

function variants(schema: JsonSchema): JsonSchema[] {
  const s = resolve(schema);
  const list = s.anyOf ?? s.oneOf;
  return list ? list.flatMap(variants) : [s];
}

function typeLabel(schema: JsonSchema): string {
  const labels = variants(schema).map((v) => {
    if (v.const !== undefined) return JSON.stringify(v.const);
    const types = Array.isArray(v.type) ? v.type : v.type ? [v.type] : [];
    return types
      .map((t) => {
        if (t === 'array') return `${v.items ? typeLabel(v.items) : 'any'}[]`;
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
function boundsLabel(schema: JsonSchema): string {
  const parts: string[] = [];
  for (const v of variants(schema)) {
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
      const inner = boundsLabel(v.items);
      if (inner) own.push(`each ${inner}`);
    }
    if (own.length) parts.push(own.join(', '));
  }
  return [...new Set(parts)].join('; ');
}

function allowedLabel(schema: JsonSchema): string {
  const values: string[] = [];
  for (const v of variants(schema)) {
    if (v.enum) values.push(...v.enum.map(String));
    if (v.items) {
      const inner = allowedLabel(v.items);
      if (inner) values.push(inner);
    }
    if (v.pattern && v.description?.toLowerCase().includes('hash')) values.push('{hash}');
  }
  return [...new Set(values)].join(', ');
}

function defaultLabel(schema: JsonSchema): string {
  const s = resolve(schema);
  const value = s.default ?? variants(s).find((v) => v.default !== undefined)?.default;
  return value === undefined ? '' : JSON.stringify(value);
}

function descriptionOf(schema: JsonSchema): string {
  const s = resolve(schema);
  if (s.description) return s.description;
  const fromVariant = variants(s).find((v) => v.description && v.type !== 'null')?.description;
  return fromVariant ?? '';
}

export function parameterRows(schema: JsonSchema): ParameterRow[] {
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties ?? {}).map(([name, prop]) => ({
    name,
    type: typeLabel(prop),
    required: required.has(name),
    defaultValue: defaultLabel(prop),
    bounds: boundsLabel(prop),
    allowed: allowedLabel(prop),
    description: descriptionOf(prop),
  }));
}

export function responseCodes(path: string, method = 'post'): { code: string; description: string }[] {
  return Object.entries(operation(path, method).responses ?? {}).map(([code, r]) => ({
    code,
    description: r.description ?? '',
  }));
}
