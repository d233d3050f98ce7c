export type {
  Endpoint,
  EndpointKind,
  RequestPart,
  StatusOperation,
  ValidationErrorEntry,
  ValidationResult,
} from './endpoint.ts';
export { endpointByPath, endpoints, TAGS } from './endpoints.ts';
export { jsonDecodeErrorDetail, parseJsonBody } from './json-body.ts';
export { buildOpenApi, type OpenApiDocument } from './openapi.ts';
export * from './schemas/index.ts';
export { compileRequestValidator, compileValidator, type RequestValidator } from './validate.ts';
