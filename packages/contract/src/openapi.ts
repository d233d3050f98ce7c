export type OpenApiDocument = Record<string, unknown>;
export function buildOpenApi(_options: { serverUrl?: string } = {}): OpenApiDocument {
  return { openapi: '3.1.0' };
}
