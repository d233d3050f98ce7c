import {
  compileValidator,
  type Endpoint,
  type RequestPart,
  readRequestBody,
  type StatusOperation,
} from '@imagegen/contract';
import type { FastifySchema, FastifySchemaCompiler } from 'fastify';
import { HttpError } from './http-errors.ts';
import { ValidatedBody } from './large-bodies.ts';
import { ReceivedBody } from './request-bodies.ts';

/**
 * Every request is validated by the contract, through Fastify's own hook: a route declares the
 * endpoint table's schemas (`routeSchema`), and `contractValidatorCompiler` turns each into the
 * contract's compiled validator. A refusal answers FastAPI's 422 `{detail: [...]}`, located at
 * "body", "query" or "path"; a handler reads `request.body`, `request.query` and `request.params`
 * already validated and with defaults filled in, and never checks a field itself.
 *
 * A JSON body arrives unread (request-bodies.ts) and is read here, as FastAPI reads it before
 * validation: a body Python cannot decode answers 422 (a JSON decode error) or 400.
 */

/** A schema of the endpoint table (TypeBox's TSchema, named through the contract). */
type ContractSchema = NonNullable<Endpoint['params']>;

const PART: Readonly<Record<string, RequestPart>> = { body: 'body', querystring: 'query', params: 'path' };

export const contractValidatorCompiler: FastifySchemaCompiler<ContractSchema> = ({
  schema,
  httpPart,
  method,
  url,
}) => {
  const part = httpPart === undefined ? undefined : PART[httpPart];
  if (!part) throw new Error(`${method} ${url}: the contract describes no ${httpPart} schema`);
  const validate = compileValidator(schema, part);
  return (data: unknown) => {
    if (data instanceof ValidatedBody) return { value: data.value };
    if (data instanceof ReceivedBody) {
      const reading = readRequestBody(data.bytes, data.contentType, schema);
      if (!reading.ok) return { error: new HttpError(reading.status, reading.detail) };
      data = reading.value;
    }
    const checked = validate(data);
    return checked.ok ? { value: checked.value } : { error: new HttpError(422, checked.detail) };
  };
};

/** The route schema of an endpoint: its JSON (or multipart) body, query string and path parameters. */
export function routeSchema(endpoint: Endpoint | StatusOperation): FastifySchema {
  const body = 'method' in endpoint ? (endpoint.request ?? endpoint.multipart) : undefined;
  const query = 'method' in endpoint ? endpoint.query : undefined;
  return {
    ...(body ? { body } : {}),
    ...(query ? { querystring: query } : {}),
    ...(endpoint.params ? { params: endpoint.params } : {}),
  };
}
