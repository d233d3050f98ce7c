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

export const PendingResponse = Type.Object(
  { status: Type.Literal('PENDING', { default: 'PENDING' }), download_urls: earlyLinks },
  { title: 'PendingResponse' },
);

export const AsyncSuccessResponse = Type.Object(
  {
    status: Type.Literal('SUCCESS', { default: 'SUCCESS' }),
    download_urls: Nullable(Type.Array(Type.String())),
  },
  { title: 'AsyncTaskSuccessResponse' },
);

export const SyncSuccessResponse = Type.Object(
  {
    status: Type.Literal('SUCCESS', { default: 'SUCCESS' }),
    download_urls: Nullable(Type.Array(Type.String())),
    image: Nullable(Type.String({ description: 'Base64 PNG of the single output when base64 was true.' })),
  },
  { title: 'SyncTaskSuccessResponse' },
);

export const Image2PromptSuccessResponse = Type.Object(
  {
    status: Type.Literal('SUCCESS', { default: 'SUCCESS' }),
    download_urls: Nullable(Type.Array(Type.String())),
    prompt: Type.String({
      description:
        'The prompt that describes the image. From the cpu engine: comma-separated tags, not a caption.',
    }),
  },
  { title: 'Image2PromptSuccessResponse' },
);

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
