import Type from 'typebox';
import { Nullable } from './common.ts';

/** Task and error responses. */

const opt = Type.Optional;

const earlyLinks = opt(
  Type.Array(Type.String(), {
    description: 'Present when the request set queued_image_urls: the links the outputs will have.',
  }),
);

export const AcceptedResponse = Type.Object(
  {
    status: Type.Literal('PENDING', { default: 'PENDING' }),
    id: Type.String({ description: 'Task id; poll the status path with it.' }),
    download_urls: earlyLinks,
  },
  { title: 'AcceptedResponse' },
);

/**
 * What a pending task may add to its status, each only when it is known: how far the engine got,
 * how many tasks the same workers run first, and a time estimate from recent runs of the pipeline.
 */
const pendingFacts = {
  progress: opt(
    Type.Number({
      minimum: 0,
      maximum: 1,
      description: 'While the task runs: the share of the work done, as the engine reports it (0 to 1).',
    }),
  ),
  queue_position: opt(
    Type.Integer({
      minimum: 0,
      description:
        'While the task waits: how many queued tasks the workers that can run it will take first, ' +
        'counting the fair turns between accounts and server_id routing (0: it is next).',
    }),
  ),
  eta_seconds: opt(
    Type.Number({
      minimum: 0,
      description:
        'Estimated seconds until the task ends, from the recent run times of its pipeline; absent ' +
        'while there are none to go by.',
    }),
  ),
};

export const PendingResponse = Type.Object(
  { status: Type.Literal('PENDING', { default: 'PENDING' }), download_urls: earlyLinks, ...pendingFacts },
  { title: 'PendingResponse' },
);

/**
 * The first output's link again, under the name the original service's frontend reads when a task
 * succeeds (its upscaler and model-switch cards wait for it); absent when there is no output link.
 */
const firstLink = opt(
  Type.String({ description: 'The first of `download_urls`, for clients that read one link.' }),
);

/**
 * What a task did otherwise than its request reads, where it did: a field the model takes no
 * notice of (as the original service's own pipelines took none), a prompt used as given. Absent
 * when there is nothing to say.
 */
const notes = opt(
  Type.Array(Type.String(), {
    description:
      'Where the task ran otherwise than the request reads: each note names the field (one the model takes no notice of, a prompt used as given) and why. Absent when there is none.',
  }),
);

export const AsyncSuccessResponse = Type.Object(
  {
    status: Type.Literal('SUCCESS', { default: 'SUCCESS' }),
    download_urls: Nullable(Type.Array(Type.String())),
    image_url: firstLink,
    notes,
  },
  { title: 'AsyncTaskSuccessResponse' },
);

export const SyncSuccessResponse = Type.Object(
  {
    status: Type.Literal('SUCCESS', { default: 'SUCCESS' }),
    download_urls: Nullable(Type.Array(Type.String())),
    image_url: firstLink,
    image: Nullable(Type.String({ description: 'Base64 PNG of the single output when base64 was true.' })),
    notes,
  },
  { title: 'SyncTaskSuccessResponse' },
);

export const Image2PromptSuccessResponse = Type.Object(
  {
    status: Type.Literal('SUCCESS', { default: 'SUCCESS' }),
    download_urls: Nullable(Type.Array(Type.String())),
    prompt: Type.String({ description: 'The prompt that describes the image.' }),
    notes,
  },
  { title: 'Image2PromptSuccessResponse' },
);

/** The `error` of a task its caller cancelled (`POST <path>/cancel/{task_id}`). */
export const CANCELLED_ERROR = 'cancelled by the caller';

export const TaskErrorResponse = Type.Object(
  { status: Type.Literal('FAILURE', { default: 'FAILURE' }), error: Type.String() },
  { title: 'TaskErrorResponse' },
);

export const ValidationError = Type.Object(
  {
    loc: Type.Array(Type.Union([Type.String(), Type.Integer()])),
    msg: Type.String(),
    type: Type.String(),
    ctx: opt(Type.Object({}, { additionalProperties: true })),
  },
  { title: 'ValidationError' },
);

export const HTTPValidationError = Type.Object(
  { detail: Type.Array(ValidationError) },
  { title: 'HTTPValidationError' },
);

/** FastAPI's HTTPException body, used for 401, 403, 404 and 429. */
export const HTTPError = Type.Object({ detail: Type.String() }, { title: 'HTTPError' });

export const LoadModelCompletedResponse = Type.Object(
  { status: Type.Literal('SUCCESS', { default: 'SUCCESS' }), model_id: Nullable(Type.String()) },
  { title: 'LoadModelCompletedResponse' },
);

const TRAINING_PENDING_STATES = ['queued', 'initialising', 'running', 'unknown'] as const;

export const TrainAcceptedResponse = Type.Object(
  { id: Type.String(), status: Type.Literal('queued', { default: 'queued' }) },
  { title: 'TrainAcceptedResponse' },
);

export const TrainPendingResponse = Type.Object(
  {
    status: Type.Unsafe<(typeof TRAINING_PENDING_STATES)[number]>({
      type: 'string',
      enum: [...TRAINING_PENDING_STATES],
    }),
    ...pendingFacts,
  },
  { title: 'TrainPendingResponse' },
);

export const TrainSuccessResponse = Type.Object(
  {
    status: Type.Literal('completed'),
    model_id: Type.String(),
    training_duration_seconds: Type.Number(),
  },
  { title: 'TrainSuccessResponse' },
);

export const TrainFailureResponse = Type.Object(
  { status: Type.Literal('failed'), error: Type.String() },
  { title: 'TrainFailureResponse' },
);

export const UploadImagesResponse = Type.Object(
  { image_urls: Type.Array(Type.String()) },
  { title: 'UploadImagesResponse' },
);

/**
 * `GET <status path>/events`: Server-Sent Events. Each event's `data` is the status body of that
 * moment (what the status path would answer), its `id` the task's change counter; the last event
 * is the final status, then the stream ends.
 */
export const TaskEventStream = Type.String({
  title: 'TaskEventStream',
  description:
    'Server-Sent Events: `id: <n>` and `data: <status body as JSON>` per change, `: keep-alive` ' +
    'comments between them; the final status is the last event. With `previews=true`, also ' +
    '`event: preview` events (no `id`) whose `data` is `{"content_type", "image"}`, the image in base64.',
});
