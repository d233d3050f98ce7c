/**
 * Reads the contract's OpenAPI document, generated at build time into .generated/openapi.json by
 * the `prebuild`/`prestart` scripts (never copied by hand): operations, their request schemas
 * (references resolved) and examples. schema-rows.ts turns a schema into a parameters table.
 */
import openapi from '@site/.generated/openapi.json';
import { type JsonSchema, type ParameterRow, parameterRows as rowsOf } from './schema-rows.ts';

export type { JsonSchema, ParameterRow };

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

/** The parameters table of a request schema of this document. */
export function parameterRows(schema: JsonSchema): ParameterRow[] {
  return rowsOf(schema, resolve);
}

export function responseCodes(path: string, method = 'post'): { code: string; description: string }[] {
  return Object.entries(operation(path, method).responses ?? {}).map(([code, r]) => ({
    code,
    description: r.description ?? '',
  }));
}
