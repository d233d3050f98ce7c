import type { DeletedModel, FieldBounds, TypedEndpoint } from '@imagegen/contract';
import type { Static, TSchema } from 'typebox';

/**
 * The SDK's request and answer types, read from the contract's endpoint table (the same rows the
 * server routes and validates by): a field the contract does not have, a wrong type or a missing
 * required field is a compile-time error, and so is a number literal out of its field's bounds
 * (`RequestBoundsOf`, checked by bounds-check.ts). Type-only: nothing of the contract is loaded at
 * run time.
 *
 * Each kind of type is one map over the paths, computed once: a generic call then looks its type
 * up instead of converting a schema per use (twelve times fewer type instantiations per call).
 */

type Rows = { [R in TypedEndpoint as R['path']]: R };
type TaskRow = Extract<TypedEndpoint, { kind: 'generation' | 'load_model' | 'training' }>;
type ReadRow = Extract<TypedEndpoint, { kind: 'record'; method: 'GET' }>;
type RecordRow = Extract<TypedEndpoint, { kind: 'record' }>;

/** A task-creating path (a pipeline), e.g. `/sd/text2image/v1`. */
export type TaskPath = TaskRow['path'];

/** A read of the owner's records, e.g. `/models/v1` or `/models/v1/{model_id}`. */
export type ReadPath = ReadRow['path'];

type Requests = { [P in TaskPath]: Static<Rows[P]['request']> };
type Bounds = { [P in TaskPath]: FieldBounds<Rows[P]['request']> };
type Accepted = { [P in TaskPath]: Static<Rows[P]['responses'][200]> };
type Statuses = { [P in TaskPath]: Static<Rows[P]['status']['responses'][200]> };
type ReadAnswers = { [P in ReadPath]: Static<Rows[P]['responses'][200]> };
type Queries = { [P in ReadPath]: Rows[P] extends { query: infer Q extends TSchema } ? Static<Q> : never };
type QueryBounds = {
  [P in ReadPath]: Rows[P] extends { query: infer Q extends TSchema } ? FieldBounds<Q> : never;
};

/** The JSON body `path` takes. */
export type RequestOf<P extends TaskPath> = Requests[P];

/**
 * The bounds of each number field of the body of `path` (a list's items with `items: true`), as
 * literal types: `{ samples: { kind: 'integer'; gt: 0; le: 4 }, ... }`.
 */
export type RequestBoundsOf<P extends TaskPath> = Bounds[P];

/** What the submission answers at once: `{status: "PENDING", id}` (training: `{id, status: "queued"}`). */
export type AcceptedOf<P extends TaskPath> = Accepted[P];

/** Any status the status path of `path` answers: pending, success or failure. */
export type StatusOf<P extends TaskPath> = Statuses[P];

/** The final status of a task that succeeded. */
export type SuccessOf<P extends TaskPath> = Extract<Statuses[P], { status: SuccessState }>;

/** The final status of a task that failed (or that its caller cancelled). */
export type FailureOf<P extends TaskPath> = Extract<Statuses[P], { status: FailureState }>;

/** A status of a task that has not ended: how far it is, where it waits, when it should end. */
export type PendingOf<P extends TaskPath> = Exclude<Statuses[P], { status: SuccessState | FailureState }>;

/** The answer of a read path. */
export type ReadAnswerOf<P extends ReadPath> = ReadAnswers[P];

/** The query a read path takes (`/tasks/v1`, `/images/v1`), or never. */
export type QueryOf<P extends ReadPath> = Queries[P];

/** The bounds of each number field of the query of a read path (`limit`), as `RequestBoundsOf` gives a body's. */
export type QueryBoundsOf<P extends ReadPath> = QueryBounds[P];

/** The `{name}` parameters of a path, each a string. */
export type ParamsOf<P extends string> = P extends `${string}{${infer Name}}${infer Rest}`
  ? { [K in Name]: string } & ParamsOf<Rest>
  : unknown;

/** The states that end a task well: `SUCCESS`, or `completed` for a training. */
export type SuccessState = 'SUCCESS' | 'completed';
/** The states that end a task badly: `FAILURE`, or `failed` for a training. */
export type FailureState = 'FAILURE' | 'failed';

/** Any status of any pipeline: what the helpers that serve every path work with. */
export type AnyStatus = Statuses[TaskPath];

/** A picture of a running task as it forms (a `preview` event of its status stream). */
export interface TaskPreview {
  /** `image/jpeg`. */
  readonly content_type: string;
  /** The image, in base64. */
  readonly image: string;
}

type Webhooks = {
  [P in TaskPath]: (SuccessOf<P> | FailureOf<P>) & {
    /** The task's id, as the submission answered it. */
    readonly id: string;
    /** The path the task was submitted to (its pipeline). */
    readonly path: P;
  };
};

/**
 * The body of the webhook a task of `path` sends when it ends: its final status, as the status path
 * answers it, then the task's `id` and `path`.
 */
export type WebhookBodyOf<P extends TaskPath> = Webhooks[P];

/** The webhook body of any pipeline; checking `path` narrows it to that pipeline's statuses. */
export type AnyWebhookBody = Webhooks[TaskPath];

/** One entry of the 422 `detail` list, as FastAPI writes it. */
export type ValidationIssue = Static<Rows['/upload_images']['responses'][422]>['detail'][number];

/** What `/upload_images` answers: the URLs of the uploaded images, in order. */
export type UploadAnswer = Static<Rows['/upload_images']['responses'][200]>;

/** What `DELETE /models/v1/{model_id}` answers: `{model_id, deleted: true}`. */
export type DeletedModelAnswer = Static<typeof DeletedModel>;

/**
 * The body of a `start` or `progress` call (a task submitted with `webhook_events_filter`): the
 * status the task answered at that moment, its `id` and `path`, and the `event`. The `completed`
 * call has no `event`: its body is `WebhookBodyOf`.
 */
export type WebhookEventBodyOf<P extends TaskPath> = PendingOf<P> & {
  readonly id: string;
  readonly path: P;
  readonly event: 'start' | 'progress';
};

/** Which calls a task makes to its webhook (`webhook_events_filter`). */
export type WebhookEvent = NonNullable<RequestOf<'/sd/text2image/v1'>['webhook_events_filter']>[number];

/** One page of `GET /tasks/v1`. */
export type TaskList = ReadAnswerOf<'/tasks/v1'>;
/** One task of that page. */
export type TaskListEntry = TaskList['tasks'][number];
/** The filters and page of `GET /tasks/v1`. */
export type TaskListQuery = QueryOf<'/tasks/v1'>;

/** What `GET /webhooks/v1/deliveries` answers: your webhook calls, newest first, with their attempts. */
export type WebhookDeliveryList = ReadAnswerOf<'/webhooks/v1/deliveries'>;
/** One webhook call and its attempts. */
export type WebhookDelivery = Static<
  Extract<RecordRow, { path: '/webhooks/v1/deliveries/{delivery_id}/redeliver' }>['responses'][200]
>;
/** The filter and size of `GET /webhooks/v1/deliveries`. */
export type WebhookDeliveryQuery = QueryOf<'/webhooks/v1/deliveries'>;

/** What `GET /usage/v1` answers: your finished tasks by UTC day and pipeline. */
export type UsageReport = ReadAnswerOf<'/usage/v1'>;
/** One day and pipeline of it. */
export type UsageRow = UsageReport['rows'][number];
/** The days of `GET /usage/v1`: `from` and `to`, `YYYY-MM-DD`, both counted. */
export type UsageQuery = QueryOf<'/usage/v1'>;
