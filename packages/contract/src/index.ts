/**
 * What other packages use of the contract; the modules say the rest. The endpoint table drives the
 * API's routes, its validation and /openapi.json (ARCHITECTURE.md, at the repository root).
 */
export {
  type DescriptionNotes,
  mergeNotes,
  notedDescription,
  withFieldNotes,
} from './description-notes.ts';
export type {
  Endpoint,
  HeaderParameter,
  PathAlias,
  RequestPart,
  StatusOperation,
  ValidationErrorEntry,
} from './endpoint.ts';
export {
  endpointByPath,
  endpoints,
  type RequestOf,
  type RequestPath,
  type TypedEndpoint,
} from './endpoints.ts';
export { jsonDecodeErrorDetail, parseJsonBody } from './json-body.ts';
export { type NumberLiteral, numberLiteral, recordNumberLiteral } from './number-literals.ts';
export { buildOpenApi } from './openapi.ts';
export { MAX_DETAIL_ENTRIES } from './pydantic-errors.ts';
export { pythonFloatRepr, pythonIntRepr, pythonStrRepr } from './python-builtins.ts';
export { BODY_PARSE_ERROR, type BodyReading, MAX_REQUEST_NESTING, readRequestBody } from './request-body.ts';
export { SAMPLE_IMAGES, SAMPLE_IMAGES_PATH, sampleImageUrl, withSampleImages } from './sample-images.ts';
export { type FieldBounds, WEBHOOK_EVENTS } from './schemas/common.ts';
export {
  DELIVERY_STATES,
  type DeletedModel,
  ENTERPRISE_PLANS,
  PLANS,
  TASK_STATES,
} from './schemas/records.ts';
export { CANCELLED_ERROR } from './schemas/responses.ts';
export { SUPERRESOLUTION_MODELS } from './schemas/superresolution-models.ts';
export { compileRequestValidator, compileUncutBodyValidator, compileValidator } from './validate.ts';
