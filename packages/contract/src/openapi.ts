import type { TSchema } from 'typebox';
import { type DescriptionNotes, notedDescription, withFieldNotes } from './description-notes.ts';
import type { Endpoint, PathAlias } from './endpoint.ts';
import { endpoints, TAGS } from './endpoints.ts';
import { RESPONSE_EXAMPLES } from './response-examples.ts';
import * as named from './schemas/index.ts';

/** OpenAPI 3.1.0 built from the endpoint table; nothing here restates a schema. */

type OpenApiDocument = {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string; license?: Record<string, string> };
  paths: Record<string, Record<string, unknown>>;
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> };
  [key: string]: unknown;
};

const SECURITY_SCHEME = 'APIKeyHeader';
/** The same key as a Bearer token (`Authorization: Bearer <key>`), as OpenAI's and MCP clients send it. */
const BEARER_SCHEME = 'HTTPBearer';

const RESPONSE_WORDS: Record<number, string> = {
  200: 'Successful Response',
  401: 'Missing or unknown API key',
  404: 'Not found, or not yours',
  409: 'The task already ended',
  422: 'Validation Error',
};

function titleOf(schema: unknown): string | undefined {
  const title = (schema as { title?: unknown } | undefined)?.title;
  return typeof title === 'string' ? title : undefined;
}

/** Every titled schema the package exports becomes a component, referenced by name. */
function componentSchemas(): Map<string, TSchema> {
  const found = new Map<string, TSchema>();
  const add = (schema: unknown) => {
    const title = titleOf(schema);
    if (title && !found.has(title)) found.set(title, schema as TSchema);
  };
  for (const value of Object.values(named)) add(value);
  for (const endpoint of endpoints) {
    add(endpoint.request);
    add(endpoint.multipart);
    for (const response of Object.values(endpoint.responses)) add(response);
  }
  return found;
}

/** Deep copy in which every titled component below the top is replaced by its $ref. */
function withRefs(schema: unknown, components: Map<string, TSchema>, top = true): unknown {
  if (Array.isArray(schema)) return schema.map((item) => withRefs(item, components, false));
  if (typeof schema !== 'object' || schema === null) return schema;
  const title = titleOf(schema);
  if (!top && title && components.has(title)) return { $ref: `#/components/schemas/${title}` };
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    out[key] = key === 'default' || key === 'examples' ? value : withRefs(value, components, false);
  }
  return out;
}

/** `successMedia`: the success answer's media type where it is not JSON (a status stream). */
function responses(
  byStatus: Readonly<Record<number, TSchema>>,
  components: Map<string, TSchema>,
  successMedia = 'application/json',
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [status, schema] of Object.entries(byStatus)) {
    const title = titleOf(schema);
    const example = title ? RESPONSE_EXAMPLES[title] : undefined;
    out[status] = {
      description: RESPONSE_WORDS[Number(status)] ?? 'Response',
      content: {
        [Number(status) === 200 ? successMedia : 'application/json']: {
          schema: withRefs(schema, components, false),
          ...(example === undefined || Number(status) !== 200 ? {} : { example }),
        },
      },
    };
  }
  return out;
}

/** OpenAPI header parameters: the headers an operation reads besides API-Key. */
function headerParameters(endpoint: Endpoint) {
  return (endpoint.headers ?? []).map((header) => ({
    name: header.name,
    in: 'header',
    required: false,
    description: header.description,
    schema: header.schema,
  }));
}

/** OpenAPI parameters from the endpoint table's object schema of path or query parameters. */
function parameters(schema: TSchema | undefined, where: 'path' | 'query') {
  const properties = (schema as { properties?: Record<string, { description?: string }> } | undefined)
    ?.properties;
  if (!properties) return [];
  const required = new Set((schema as { required?: string[] }).required ?? []);
  return Object.entries(properties).map(([name, property]) => ({
    name,
    in: where,
    required: required.has(name),
    ...(property.description ? { description: property.description } : {}),
    schema: property,
  }));
}

function submitOperation(endpoint: Endpoint, components: Map<string, TSchema>, notes: DescriptionNotes) {
  const requestBody = endpoint.multipart
    ? {
        required: true,
        content: {
          'multipart/form-data': {
            schema: withFieldNotes(withRefs(endpoint.multipart, components, false), notes),
            encoding: { image_files: { contentType: 'image/png, image/jpeg, image/webp' } },
          },
        },
      }
    : {
        required: true,
        content: {
          'application/json': {
            schema: withFieldNotes(withRefs(endpoint.request, components, false), notes),
            ...(endpoint.example === undefined ? {} : { example: endpoint.example }),
          },
        },
      };
  const headers = headerParameters(endpoint);
  return {
    tags: [endpoint.tag],
    operationId: endpoint.operationId,
    summary: endpoint.summary,
    description: notedDescription(endpoint, notes),
    ...(headers.length > 0 ? { parameters: headers } : {}),
    requestBody,
    responses: responses(endpoint.responses, components),
  };
}

/** An operation without a request body: a read, or a cancel (its path names the task). */
function readOperation(endpoint: Endpoint, components: Map<string, TSchema>) {
  const list = [
    ...parameters(endpoint.params, 'path'),
    ...parameters(endpoint.query, 'query'),
    ...headerParameters(endpoint),
  ];
  return {
    tags: [endpoint.tag],
    operationId: endpoint.operationId,
    summary: endpoint.summary,
    description: endpoint.description,
    ...(list.length > 0 ? { parameters: list } : {}),
    responses: responses(endpoint.responses, components, endpoint.responseMedia),
  };
}

/**
 * An operation and its aliases: the operation at its own path, saying where else it is served,
 * and at each alias the same operation under the alias's operation id, saying whose alias it is.
 */
function withAliases(
  paths: OpenApiDocument['paths'],
  method: string,
  path: string,
  operation: { operationId: string; description: string },
  aliases: readonly PathAlias[] = [],
): void {
  const verb = method.toUpperCase();
  const elsewhere = aliases.map((other) => `\`${verb} ${other.path}\``).join(', ');
  paths[path] = {
    ...paths[path],
    [method]: aliases.length
      ? { ...operation, description: `${operation.description}\n\nAlso served at ${elsewhere}.` }
      : operation,
  };
  for (const other of aliases) {
    paths[other.path] = {
      ...paths[other.path],
      [method]: {
        ...operation,
        operationId: other.operationId,
        description: `The same operation as \`${verb} ${path}\`.\n\n${operation.description}`,
      },
    };
  }
}

/**
 * `notes`: what the engines a deployment serves add to the descriptions (none: the contract's
 * words alone, which hold on every engine).
 */
export function buildOpenApi(
  options: { serverUrl?: string; notes?: DescriptionNotes } = {},
): OpenApiDocument {
  const notes = options.notes ?? {};
  const components = componentSchemas();
  const paths: OpenApiDocument['paths'] = {};
  for (const endpoint of endpoints) {
    const method = endpoint.method.toLowerCase();
    const operation =
      endpoint.request || endpoint.multipart
        ? submitOperation(endpoint, components, notes)
        : readOperation(endpoint, components);
    withAliases(paths, method, endpoint.path, operation, endpoint.aliases);
    const status = endpoint.status;
    if (status) {
      const statusResponses = responses(status.responses, components);
      const ok = statusResponses['200'] as { content: { 'application/json': Record<string, unknown> } };
      const successTitle = Object.keys(RESPONSE_EXAMPLES).find(
        (title) => title !== 'AcceptedResponse' && JSON.stringify(ok).includes(`/${title}"`),
      );
      if (successTitle) ok.content['application/json'].example = RESPONSE_EXAMPLES[successTitle];
      const statusOperation = {
        tags: [endpoint.tag],
        operationId: status.operationId,
        summary: status.summary,
        description: status.description,
        parameters: parameters(status.params, 'path'),
        responses: statusResponses,
      };
      withAliases(paths, 'get', status.path, statusOperation, status.aliases);
    }
  }
  const schemas: Record<string, unknown> = {};
  for (const [title, schema] of [...components].sort(([a], [b]) => a.localeCompare(b))) {
    schemas[title] = withFieldNotes(withRefs(schema, components, true), notes);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'imagegen API',
      version: '1.0.0',
      description:
        'Image generation as asynchronous tasks: submit with POST, then poll the status path. ' +
        'Authenticate with the `API-Key` header (or `Authorization: Bearer <key>`). Validation errors ' +
        "answer 422 in FastAPI's format.",
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: options.serverUrl ?? 'http://localhost:8000' }],
    // Either scheme: one key, in whichever header the client sends.
    security: [{ [SECURITY_SCHEME]: [] }, { [BEARER_SCHEME]: [] }],
    tags: TAGS.map((tag) => ({ ...tag })),
    paths,
    components: {
      schemas,
      securitySchemes: {
        [SECURITY_SCHEME]: { type: 'apiKey', in: 'header', name: 'API-Key' },
        [BEARER_SCHEME]: {
          type: 'http',
          scheme: 'bearer',
          description: 'The same API key, as a Bearer token.',
        },
      },
    },
  };
}
