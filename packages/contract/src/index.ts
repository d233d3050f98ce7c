export type {
  Endpoint,
  EndpointKind,
  StatusOperation,
  ValidationErrorEntry,
  ValidationResult,
} from './endpoint.ts';
export { endpointByPath, endpoints, TAGS } from './endpoints.ts';
export { jsonDecodeErrorDetail, parseJsonBody } from './json-body.ts';
export { buildOpenApi, type OpenApiDocument } from './openapi.ts';
export * from './schemas/index.ts';
export {
  compileQueryValidator,
  compileRequestValidator,
  compileSchemaValidator,
  type RequestValidator,
} from './validate.ts';
