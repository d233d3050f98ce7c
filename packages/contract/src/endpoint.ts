import type { TSchema } from 'typebox';

/**
 * One row of the endpoint table: everything the server, the OpenAPI builder, the docs tables and
 * the SDK need to know about an operation. A handler never re-declares a schema, bound or default.
 */
export interface Endpoint {
  readonly operationId: string;
  readonly method: 'GET' | 'POST' | 'DELETE';
  /** e.g. `/sd/text2image/v1`. For task-creating endpoints this is also the pipeline name. */
  readonly path: string;
  readonly kind: EndpointKind;
  /** OpenAPI tag; the docs sidebar groups by it. */
  readonly tag: string;
  readonly summary: string;
  /** Markdown. Says which schema serves the path where the API reference leaves that implicit. */
  readonly description: string;
  /** JSON body schema (POST), or undefined (GET, multipart upload: see `multipart`). */
  readonly request?: TSchema;
  /** Name of the request schema as the API reference writes it, e.g. `Text2ImagePromptSD`. */
  readonly requestName?: string;
  /** Query parameters (GET), an object schema: arrive as text, read as numbers where it says so. */
  readonly query?: TSchema;
  /** Path parameters, an object schema with one property per `{name}` of `path`. */
  readonly params?: TSchema;
  /** Multipart body schema, for the upload endpoint only. */
  readonly multipart?: TSchema;
  /** Success and error responses by HTTP status. */
  readonly responses: Readonly<Record<number, TSchema>>;
  /** For task-creating endpoints: `GET <path>/status/{task_id}` and what it answers. */
  readonly status?: StatusOperation;
  /**
   * Request fields that hold image URLs (string or list of strings). The worker fetches exactly
   * these, SSRF-safe, before the engine runs.
   */
  readonly imageFields: readonly string[];
  /** A request body that validates, used in OpenAPI examples, docs and tests. */
  readonly example?: unknown;
  /** For `cancel` and `events` rows: the task-creating path whose tasks they act on. */
  readonly taskPath?: string;
  /**
   * Request headers the operation reads besides `API-Key` (`Prefer`, `Idempotency-Key`,
   * `Cancel-After`, `Last-Event-ID`): documented here, parsed by the handler, since their syntax is HTTP's own.
   */
  readonly headers?: readonly HeaderParameter[];
  /** The media type of the success answer when it is not JSON (`text/event-stream`). */
  readonly responseMedia?: string;
  /** Other paths that serve this operation exactly (see PathAlias). */
  readonly aliases?: readonly PathAlias[];
}

/**
 * Another path of an operation: same request, answer and key, served and listed in openapi.json
 * under an operation id of its own. It exists for clients of the original service, whose frontend
 * and docs send paths this API's table writes otherwise (`/upload_images`, `/load_model/status/…`).
 */
export interface PathAlias {
  readonly path: string;
  readonly operationId: string;
}

export interface HeaderParameter {
  readonly name: string;
  readonly description: string;
  readonly schema: TSchema;
}

export type EndpointKind =
  /** POST creates a task; answers the accepted shape; has a status path. */
  | 'generation'
  /** load_model: a task whose status answers the load-model completed shape. */
  | 'load_model'
  /** train_model: a task whose status answers the training shapes. */
  | 'training'
  /** Upload images (multipart). */
  | 'upload'
  /** Reads and writes of the owner's records (models, images, subscription, sync, tasks). */
  | 'record'
  /** DELETE of one of the owner's records (a model): 404 for another owner's, 409 while in use. */
  | 'delete'
  /** POST `<path>/cancel/{task_id}`: ends a queued or running task of `taskPath`. */
  | 'cancel'
  /** GET `<status path>/events`: the task's status as Server-Sent Events until it ends. */
  | 'events';

export interface StatusOperation {
  readonly operationId: string;
  /** e.g. `/sd/text2image/v1/status/{task_id}` (training: `{training_id}`). */
  readonly path: string;
  /** The `{task_id}` (or `{training_id}`) path parameter. */
  readonly params: TSchema;
  readonly summary: string;
  readonly description: string;
  readonly responses: Readonly<Record<number, TSchema>>;
  /** Other paths of this status (see PathAlias). */
  readonly aliases?: readonly PathAlias[];
}

/** The part of a request a schema describes; every error's `loc` starts with it, as FastAPI's does. */
export type RequestPart = 'body' | 'query' | 'path';

/** One entry of a 422 body, exactly as FastAPI with pydantic v1 writes it. */
export interface ValidationErrorEntry {
  loc: (string | number)[];
  msg: string;
  type: string;
  ctx?: Record<string, unknown>;
}

export type ValidationResult<T = Record<string, unknown>> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly detail: ValidationErrorEntry[] };
