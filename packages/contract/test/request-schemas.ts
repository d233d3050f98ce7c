import type { TSchema } from 'typebox';
import { compileRequestValidator, type Endpoint, endpoints } from '../src/index.ts';

/** Every JSON request schema of the endpoint table, by its name in the API reference, with a valid example. */
export interface RequestSchema {
  name: string;
  endpoint: Endpoint;
  schema: TSchema & { properties: Record<string, Record<string, unknown>>; required?: string[] };
  example: Record<string, unknown>;
  validate: (body: unknown) => ReturnType<ReturnType<typeof compileRequestValidator>>;
}

export const requestSchemas: RequestSchema[] = [];
for (const endpoint of endpoints) {
  if (!endpoint.request || !endpoint.requestName) continue;
  if (requestSchemas.some((known) => known.name === endpoint.requestName)) continue;
  const validate = compileRequestValidator(endpoint);
  requestSchemas.push({
    name: endpoint.requestName,
    endpoint,
    schema: endpoint.request as RequestSchema['schema'],
    example: endpoint.example as Record<string, unknown>,
    validate: (body) => validate(structuredClone(body)),
  });
}

export function appliesTo(
  row: { only?: readonly string[]; except?: readonly string[] },
  name: string,
): boolean {
  if (row.only && !row.only.includes('*') && !row.only.includes(name)) return false;
  return !row.except?.includes(name);
}

/** The example without `field`, so the schema's default (if any) is what fills it. */
export function without(example: Record<string, unknown>, field: string): Record<string, unknown> {
  const { [field]: _dropped, ...rest } = example;
  return rest;
}
