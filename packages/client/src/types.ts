import type { TypedEndpoint } from '@imagegen/contract';
import type { Static, TSchema } from 'typebox';

/**
 * The SDK's request and answer types, read from the contract's endpoint table (the same rows the
 * server routes and validates by): a field the contract does not have, a wrong type or a missing
 * required field is a compile-time error. Type-only: nothing of the contract is loaded at run time.
 */

type Row<P> = Extract<TypedEndpoint, { path: P }>;
type TaskRow = Extract<TypedEndpoint, { kind: 'generation' | 'load_model' | 'training' }>;
type ReadRow = Extract<TypedEndpoint, { kind: 'record' }>;

/** A task-creating path (a pipeline), e.g. `/sd/text2image/v1`. */
export type TaskPath = TaskRow['path'];

/** A read of the owner's records, e.g. `/models/v1` or `/models/v1/{model_id}`. */
export type ReadPath = ReadRow['path'];

/** The JSON body `path` takes. */
export type RequestOf<P extends TaskPath> = Static<Row<P>['request']>;

/** What the submission answers at once: `{status: "PENDING", id}` (training: `{id, status: "queued"}`). */
export type AcceptedOf<P extends TaskPath> = Static<Row<P>['responses'][200]>;

/** Any status the status path of `path` answers: pending, success or failure. */
export type StatusOf<P extends TaskPath> = Static<Row<P>['status']['responses'][200]>;

/** The final status of a task that succeeded. */
export type SuccessOf<P extends TaskPath> = Extract<StatusOf<P>, { status: SuccessState }>;

/** The final status of a task that failed (or that its caller cancelled). */
export type FailureOf<P extends TaskPath> = Extract<StatusOf<P>, { status: FailureState }>;

/** A status of a task that has not ended: how far it is, where it waits, when it should end. */
export type PendingOf<P extends TaskPath> = Exclude<StatusOf<P>, SuccessOf<P> | FailureOf<P>>;

/** The answer of a read path. */
export type ReadAnswerOf<P extends ReadPath> = Static<Row<P>['responses'][200]>;

/** The query a read path takes (`/tasks/v1`, `/images/v1`), or never. */
export type QueryOf<P extends ReadPath> =
  Row<P> extends { query: infer Q extends TSchema } ? Static<Q> : never;

/** The `{name}` parameters of a path, each a string. */
export type ParamsOf<P extends string> = P extends `${string}{${infer Name}}${infer Rest}`
  ? { [K in Name]: string } & ParamsOf<Rest>
  : unknown;

/** The states that end a task well: `SUCCESS`, or `completed` for a training. */
export type SuccessState = 'SUCCESS' | 'completed';
/** The states that end a task badly: `FAILURE`, or `failed` for a training. */
export type FailureState = 'FAILURE' | 'failed';

/** Any status of any pipeline: what the helpers that serve every path work with. */
export type AnyStatus = StatusOf<TaskPath>;

/** One entry of the 422 `detail` list, as FastAPI writes it. */
export type ValidationIssue = Static<Row<'/upload_images/v1'>['responses'][422]>['detail'][number];

/** One page of `GET /tasks/v1`. */
export type TaskList = ReadAnswerOf<'/tasks/v1'>;
/** One task of that page. */
export type TaskListEntry = TaskList['tasks'][number];
/** The filters and page of `GET /tasks/v1`. */
export type TaskListQuery = QueryOf<'/tasks/v1'>;

/** What `/upload_images/v1` answers: the URLs of the uploaded images, in order. */
export type UploadAnswer = Static<Row<'/upload_images/v1'>['responses'][200]>;
