import Type, { type Static, type TObject, type TSchema } from 'typebox';
import type { Endpoint, EndpointKind, HeaderParameter, PathAlias, StatusOperation } from './endpoint.ts';
import { EXAMPLES } from './examples.ts';
import { imageFieldsOf } from './image-fields.ts';
import { SD35Prompt, StylePrompt } from './schemas/base-models.ts';
import { Bool, Enum, Int } from './schemas/common.ts';
import { FaceLockPrompt, FaceSwapPrompt, InstamodelPrompt, PhotomakerPrompt } from './schemas/face.ts';
import {
  FashionDressPrompt,
  FashionLowerPrompt,
  FashionUpperPrompt,
  ModelswitchPrompt,
} from './schemas/fashion.ts';
import { LoadModelPrompt, SyncModelPrompt, TrainModelPrompt, UploadImagesBody } from './schemas/models.ts';
import {
  BatchTasks,
  DeletedModel,
  ImageInfo,
  TASK_STATES,
  TaskList,
  UsageReport,
  UserAccount,
  UserImageList,
  UserModel,
  UserModelList,
  UserSubscription,
  UserSubscriptionList,
  WebhookDelivery,
  WebhookDeliveryList,
  WebhookSecret,
} from './schemas/records.ts';
import {
  AcceptedResponse,
  AsyncSuccessResponse,
  CANCELLED_ERROR,
  HTTPError,
  HTTPValidationError,
  Image2PromptSuccessResponse,
  LoadModelCompletedResponse,
  PendingResponse,
  SyncSuccessResponse,
  TaskErrorResponse,
  TaskEventStream,
  TrainAcceptedResponse,
  TrainFailureResponse,
  TrainPendingResponse,
  TrainSuccessResponse,
  UploadImagesResponse,
} from './schemas/responses.ts';
import {
  ControlnetPromptSD,
  ControlnetPromptSDXL,
  Image2ImagePromptSD,
  Image2ImagePromptSDXL,
  InpaintingPromptSD,
  InpaintingPromptSDXL,
  SDGenPrompt,
  SDXLGenPrompt,
  Text2ImagePromptSD,
  Text2ImagePromptSDXL,
} from './schemas/sd.ts';
import {
  BgChangerPrompt,
  BgRemoverPrompt,
  Image2PromptRequest,
  InpaintAnythingPrompt,
  LogoPrompt,
  OutpaintingPrompt,
  RelightPrompt,
  SuperresolutionPrompt,
  UpscalerPrompt,
} from './schemas/utilities.ts';

/**
 * The endpoint table: every path the API reference lists, and the designed ones (paths added where
 * the reference names a schema but no path), in one list. The
 * server registers routes by walking it; openapi.json, the docs tables and the SDK read it too.
 */

export const TAGS = [
  { name: 'SD1.5', description: 'Stable Diffusion 1.5 pipelines.' },
  { name: 'SDXL', description: 'Stable Diffusion XL pipelines.' },
  {
    name: 'Optimised base models',
    description: 'Generate (SD1.5, SDXL, Flux) and Stable Diffusion 3 and 3.5.',
  },
  { name: 'Face control', description: 'Face swap, face lock, instant model and Photomaker.' },
  { name: 'Fashion', description: 'Virtual try-on and model switch.' },
  { name: 'Utilities', description: 'Upscaling, background, relight, outpainting, logos, prompts, uploads.' },
  { name: 'Custom models', description: 'Load and list your own models.' },
  { name: 'Training', description: 'Train a model on your photos.' },
  { name: 'Enterprise', description: 'Dedicated servers: copy models onto them.' },
  { name: 'Account', description: 'Your images, subscription, batches and webhook secret.' },
] as const;

type Tag = (typeof TAGS)[number]['name'];

const auth = { 401: HTTPError };
const submitResponses = { 200: AcceptedResponse, ...auth, 422: HTTPValidationError };

/** The headers every task submission reads (see the Task lifecycle guide). */
const SUBMIT_HEADERS: readonly HeaderParameter[] = [
  {
    name: 'Prefer',
    description:
      '`wait=N` (N from 0 to 60): hold the answer up to N seconds; if the task ends by then the answer ' +
      "is its final status (the status path's body, plus `id`), otherwise the usual one. Either way the " +
      'task is the same, and the answer says `Preference-Applied: wait=N`.',
    schema: Type.String(),
  },
  {
    name: 'Idempotency-Key',
    description:
      'Up to 255 visible characters of your choosing. For 24 hours a retry with the same key and the ' +
      'same body answers the task the first request created (with `Idempotent-Replayed: true`) instead ' +
      'of queueing another; the same key with a different body answers 422.',
    schema: Type.String(),
  },
  {
    name: 'Cancel-After',
    description:
      "The task's deadline, counted from the submission: a duration in whole numbers with the units h, " +
      'm, s, ms, largest first (`30s`, `5m`, `1h30m`, `1s500ms`), from 1s to 24h. A task still waiting ' +
      'then never runs, a running one is stopped, and either fails with ' +
      "`the task's deadline (Cancel-After: 30s) passed`. Anything else answers 422.",
    schema: Type.String(),
  },
];

const LAST_EVENT_ID: HeaderParameter = {
  name: 'Last-Event-ID',
  description:
    'The `id` of the last event received: a reconnecting stream sends only newer ones (browsers send it ' +
    'by themselves).',
  schema: Type.String(),
};

function operationId(path: string): string {
  return path
    .replace(/^\//, '')
    .replace(/\{([^}]+)\}/g, 'by_$1')
    .replace(/[^A-Za-z0-9]+/g, '_');
}

/**
 * What each path parameter names. Every one is a plain string, as a FastAPI `str` parameter is:
 * an id that names nothing (malformed, unknown or another owner's) answers 404, never 422.
 */
const PATH_PARAMETERS: Readonly<Record<string, string>> = {
  task_id: 'The `id` the submission answered.',
  training_id: 'The `id` /train_model/v1 answered.',
  model_id: 'A `model_id` from /models/v1.',
  image_id: 'An `image_id` from /images/v1.',
  batch_id: 'The `batch_id` the tasks were submitted with.',
  delivery_id: 'An `id` from /webhooks/v1/deliveries.',
  user_id: "Your account id: the `user_id` of /subscription/v1. Another account's id answers 404.",
};

/** The path parameters of `path` (one property per `{name}`), or undefined when it has none. */
function pathParams(path: string): TSchema | undefined {
  const names = [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]!);
  if (names.length === 0) return undefined;
  const properties: Record<string, TSchema> = {};
  for (const name of names) {
    const description = PATH_PARAMETERS[name];
    if (!description) throw new Error(`${path}: path parameter {${name}} has no description`);
    properties[name] = Type.String({ description });
  }
  return Type.Object(properties);
}

/** A path with parameters, and their schema. */
function withParams<const P extends string>(path: P): { path: P; params: TSchema } {
  const params = pathParams(path);
  if (!params) throw new Error(`${path} has no path parameter`);
  return { path, params };
}

/** An alias of a path (PathAlias), named by its own operation id. */
function alias(path: string): PathAlias {
  return { path, operationId: operationId(path) };
}

/** What a status path answers while the task runs, when it succeeded, when it failed. */
function taskStatus<const P extends string, S extends TSchema>(
  path: P,
  success: S,
  what: string,
  aliases: readonly string[] = [],
) {
  const own = withParams(`${path}/status/{task_id}` as const);
  for (const other of aliases) {
    if (pathParams(other) === undefined || !other.endsWith('/{task_id}')) {
      throw new Error(`${other}: a status alias ends in {task_id}, as ${own.path} does`);
    }
  }
  return {
    operationId: `${operationId(path)}_status`,
    ...own,
    summary: `Status of a ${what} task`,
    description:
      'Answers `PENDING` while the task waits or runs, `SUCCESS` with `download_urls` when it is done, ' +
      'or `FAILURE` with an `error`. Any of your tasks answers here, in the shape of the path it was ' +
      'submitted to (a training `completed`, a model load its `model_id`), as at its own status path.',
    responses: {
      200: Type.Union([PendingResponse, success, TaskErrorResponse]),
      ...auth,
      404: HTTPError,
    },
    ...(aliases.length > 0 ? { aliases: aliases.map(alias) } : {}),
  } satisfies StatusOperation;
}

type TaskKind = Extract<EndpointKind, 'generation' | 'load_model'>;

interface TaskRow<P extends string, R extends TSchema, K extends TaskKind, S extends TSchema> {
  path: P;
  tag: Tag;
  summary: string;
  /** Why this schema serves this path, where the API reference leaves it implicit. */
  description: string;
  request: R;
  kind?: K;
  success?: S;
  /** Other paths of its status: the forms the original service's docs print. */
  statusAliases?: readonly string[];
}

/** What `successShape` answers, as a type: the synchronous shape when the request has `base64`. */
type SuccessShape<R extends TSchema> =
  R extends TObject<infer Properties>
    ? 'base64' extends keyof Properties
      ? typeof SyncSuccessResponse
      : typeof AsyncSuccessResponse
    : typeof AsyncSuccessResponse;

function successShape(request: TSchema): TSchema {
  const properties = (request as { properties?: Record<string, unknown> }).properties ?? {};
  return 'base64' in properties ? SyncSuccessResponse : AsyncSuccessResponse;
}

/**
 * A task-creating row. Generic so the row keeps its path and schemas as types (TypedEndpoint):
 * the SDK reads its request and answer types from the row, not from a copy.
 */
function task<
  const P extends string,
  R extends TSchema,
  K extends TaskKind = 'generation',
  S extends TSchema = SuccessShape<R>,
>(row: TaskRow<P, R, K, S>) {
  const requestName = (row.request as { title?: string }).title;
  const success: TSchema = row.success ?? successShape(row.request);
  const shape = success === SyncSuccessResponse ? 'synchronous-shape' : 'asynchronous-shape';
  return {
    operationId: operationId(row.path),
    method: 'POST',
    path: row.path,
    kind: (row.kind ?? 'generation') as K,
    tag: row.tag,
    summary: row.summary,
    description:
      `${row.description}\n\nRequest schema: \`${requestName}\`. Answers \`{status: "PENDING", id}\`; ` +
      `poll \`GET ${row.path}/status/{task_id}\` (${shape} success).`,
    request: row.request,
    ...(requestName ? { requestName } : {}),
    responses: submitResponses,
    headers: SUBMIT_HEADERS,
    status: taskStatus(row.path, success as S, row.summary.toLowerCase(), row.statusAliases),
    imageFields: imageFieldsOf(row.request),
    example: EXAMPLES[row.path],
  } satisfies Endpoint;
}

/** A read of the owner's records; generic for the same reason as `task`. */
function record<const P extends string, R extends TSchema>(
  path: P,
  summary: string,
  description: string,
  response: R,
  tag: Tag = 'Account',
) {
  const params = pathParams(path);
  const responses: { 200: R } & Record<number, TSchema> = { 200: response, ...auth };
  if (params) responses[404] = HTTPError;
  return {
    operationId: operationId(path),
    method: 'GET',
    path,
    ...(params ? { params } : {}),
    kind: 'record',
    tag,
    summary,
    description,
    responses,
    imageFields: [],
  } satisfies Endpoint;
}

const generations = [
  task({
    path: '/sd/text2image/v1',
    tag: 'SD1.5',
    summary: 'Text to image (SD1.5)',
    description: 'Generates images from a prompt with Stable Diffusion 1.5 or a custom SD1.5 model.',
    request: Text2ImagePromptSD,
  }),
  task({
    path: '/sd/image2image/v1',
    tag: 'SD1.5',
    summary: 'Image to image (SD1.5)',
    description: 'Redraws `init_image` following the prompt; `strength` sets how far it may move.',
    request: Image2ImagePromptSD,
  }),
  task({
    path: '/sd/inpainting/v1',
    tag: 'SD1.5',
    summary: 'Inpainting (SD1.5)',
    description: 'Repaints the white area of `mask_image` inside `init_image`.',
    request: InpaintingPromptSD,
  }),
  task({
    path: '/sd/controlnet/v1',
    tag: 'SD1.5',
    summary: 'ControlNet (SD1.5)',
    description: 'Generates images guided by control images (`init_images`), one per entry of `controlnets`.',
    request: ControlnetPromptSD,
  }),
  task({
    path: '/sdxl/text2image/v1',
    tag: 'SDXL',
    summary: 'Text to image (SDXL)',
    description: 'Generates images from a prompt with SDXL or a custom SDXL model.',
    request: Text2ImagePromptSDXL,
  }),
  task({
    path: '/sdxl/image2image/v1',
    tag: 'SDXL',
    summary: 'Image to image (SDXL)',
    description: 'Redraws `init_image` following the prompt with SDXL.',
    request: Image2ImagePromptSDXL,
  }),
  task({
    path: '/sdxl/inpainting/v1',
    tag: 'SDXL',
    summary: 'Inpainting (SDXL)',
    description: 'Repaints the white area of `mask_image` inside `init_image` with SDXL.',
    request: InpaintingPromptSDXL,
  }),
  task({
    path: '/sdxl/controlnet/v1',
    tag: 'SDXL',
    summary: 'ControlNet (SDXL)',
    description: 'SDXL generation guided by control images; controlnet weights are 0 to 1 on SDXL.',
    request: ControlnetPromptSDXL,
  }),
  task({
    path: '/generate/v1',
    tag: 'Optimised base models',
    summary: 'Generate (Stable Diffusion 1.5)',
    description:
      'The one-call SD1.5 generator: a prompt and a `style` preset (`realistic_portrait`, `fantasy_art`, ' +
      '`cartoon_anime`). Served by `SDGenPrompt`, the fields of its page, with the Generate v1 defaults: ' +
      '4 samples, 30 steps, clip_skip 2, 512 × 512.',
    request: SDGenPrompt,
  }),
  task({
    path: '/generate/v2',
    tag: 'Optimised base models',
    summary: 'Generate (SDXL)',
    description:
      'The one-call SDXL generator. Served by `SDXLGenPrompt`: only `prompt` is required; ' +
      '`negative_prompt`, the LoRA lists, `embeddings` and the adapter fields may be null. 1024 × 1024, ' +
      '20 steps by default.',
    request: SDXLGenPrompt,
  }),
  task({
    path: '/generate/v3',
    tag: 'Optimised base models',
    summary: 'Generate (Flux)',
    description:
      'Flux (schnell unless the server maps dev) text and image generation with a style. Served by the ' +
      'original API\'s "Flux/StylePrompt" (`StylePrompt`): only `prompt` is required; 2 samples of ' +
      '1024 × 1024 by default, sizes up to 1440.',
    request: StylePrompt,
  }),
  task({
    path: '/sd3/v1',
    tag: 'Optimised base models',
    summary: 'Stable Diffusion 3',
    description:
      'Stable Diffusion 3 (medium). Served by `SD35Prompt`, like /sd3_5/v1: the original API gives one schema ' +
      'for both; the path picks the model. At most 2 samples, guidance_scale from 0.',
    request: SD35Prompt,
  }),
  task({
    path: '/sd3_5/v1',
    tag: 'Optimised base models',
    summary: 'Stable Diffusion 3.5',
    description:
      'Stable Diffusion 3.5 (large). Served by `SD35Prompt`, like /sd3/v1; the path picks the model.',
    request: SD35Prompt,
  }),
  task({
    path: '/faceswap/v1',
    tag: 'Face control',
    summary: 'Face swap',
    description: 'Swaps the face of `input_face` into `input_image`. One output, so `base64` is offered.',
    request: FaceSwapPrompt,
  }),
  task({
    path: '/instamodel/v1',
    tag: 'Face control',
    summary: 'Instant model',
    description:
      'Portraits of the person in `input_face` without training; 9 steps and guidance 1 by default.',
    request: InstamodelPrompt,
  }),
  task({
    path: '/facelock/v1',
    tag: 'Face control',
    summary: 'Face lock (SD1.5)',
    description:
      'Keeps the identity of `input_face` in new images. v1 and v2 share `FaceLockPrompt` (the original API ' +
      'gives one schema); v1 runs SD1.5-family models.',
    request: FaceLockPrompt,
  }),
  task({
    path: '/facelock/v2',
    tag: 'Face control',
    summary: 'Face lock (SDXL)',
    description:
      'Keeps the identity of `input_face` in new images. Shares `FaceLockPrompt` with v1; v2 runs ' +
      'SDXL-family models.',
    request: FaceLockPrompt,
  }),
  task({
    path: '/photomaker/v1',
    tag: 'Face control',
    summary: 'Photomaker',
    description: 'Stylised images of the person in `init_images`; fewer than 20 steps.',
    request: PhotomakerPrompt,
  }),
  task({
    path: '/fashion_lower/v1',
    tag: 'Fashion',
    summary: 'Virtual try-on: lower body',
    description:
      'Dresses `model_image` in the lower-body garment of `cloth_image`. Served by `FashionLowerPrompt`.',
    request: FashionLowerPrompt,
  }),
  task({
    path: '/fashion_upper/v1',
    tag: 'Fashion',
    summary: 'Virtual try-on: upper body',
    description:
      'Designed path (the original API names the upper-body prompt but no path), in the style of ' +
      '/fashion_lower/v1. Served by `FashionUpperPrompt`.',
    request: FashionUpperPrompt,
  }),
  task({
    path: '/fashion_dress/v1',
    tag: 'Fashion',
    summary: 'Virtual try-on: dress',
    description: 'Dresses `model_image` in the dress of `cloth_image`. Served by `FashionDressPrompt`.',
    request: FashionDressPrompt,
  }),
  task({
    path: '/modelswitch/v1',
    tag: 'Fashion',
    summary: 'Model switch',
    description: 'Replaces the person wearing the outfit in `input_image`, optionally with `input_face`.',
    request: ModelswitchPrompt,
  }),
  task({
    path: '/superresolution/v1',
    tag: 'Utilities',
    summary: 'Superresolution',
    description:
      'Upscales `init_image` by `scale_factor` with an ESRGAN model. One output: `base64` offered.',
    request: SuperresolutionPrompt,
  }),
  task({
    path: '/upscaler/v1',
    tag: 'Utilities',
    summary: 'Creative upscaler',
    description:
      'Upscales `input_image` guided by a prompt: `deblur` keeps it, `variation` reinvents detail.',
    request: UpscalerPrompt,
  }),
  task({
    path: '/image2prompt/v1',
    tag: 'Utilities',
    summary: 'Image to prompt',
    description: 'Describes `input_image` as a prompt; the success shape carries it in `prompt`.',
    request: Image2PromptRequest,
    success: Image2PromptSuccessResponse,
  }),
  task({
    path: '/bgremover/v1',
    tag: 'Utilities',
    summary: 'Remove background',
    description: 'Cuts the subject of `init_image` out onto transparency. One output: `base64` offered.',
    request: BgRemoverPrompt,
  }),
  task({
    path: '/bgchanger/v1',
    tag: 'Utilities',
    summary: 'Change background',
    description: 'Puts the subject of `init_image` on a new background described by the prompt.',
    request: BgChangerPrompt,
  }),
  task({
    path: '/relight/v1',
    tag: 'Utilities',
    summary: 'Relight',
    description:
      'Relights `init_image` with light from `light`. Several samples are possible, so the answer is ' +
      'the asynchronous shape (no `base64`).',
    request: RelightPrompt,
  }),
  task({
    path: '/outpainting/v1',
    tag: 'Utilities',
    summary: 'Outpainting',
    description: 'Extends `init_image` in each `direction` by `expansion` pixels.',
    request: OutpaintingPrompt,
  }),
  task({
    path: '/logo/v1',
    tag: 'Utilities',
    summary: 'Logo',
    description: 'Turns a sketch or existing logo (`image`) into a finished logo.',
    request: LogoPrompt,
  }),
  task({
    path: '/inpaint_anything/v1',
    tag: 'Utilities',
    summary: 'Inpaint anything',
    description:
      'Designed path (the original API names `InpaintAnythingPrompt` but no path): fills, replaces or removes ' +
      'the object at `input_coords`.',
    request: InpaintAnythingPrompt,
  }),
  task({
    path: '/load_model/v1',
    tag: 'Custom models',
    kind: 'load_model',
    summary: 'Load a model',
    description:
      'Loads a LoRA, checkpoint or embedding from `model_url` or `pretrained_model_path`. ' +
      '`model_extension` is required with `model_url`; `revision` for checkpoint and controlnet models.',
    request: LoadModelPrompt,
    success: LoadModelCompletedResponse,
    // The original service's docs print the status path without its version.
    statusAliases: ['/load_model/status/{task_id}'],
  }),
  task({
    path: '/sync_model/v1',
    tag: 'Enterprise',
    kind: 'load_model',
    summary: 'Sync a model to a server',
    description:
      'Designed path (the original API names `SyncModelPrompt` but no path): copies model `model_id` onto the ' +
      'enterprise server `server_id` (`any`: whichever of your servers is free first), or onto the shared ' +
      'servers when `server_id` is left out. Its status answers like /load_model/v1.',
    request: SyncModelPrompt,
    success: LoadModelCompletedResponse,
  }),
];

const training = {
  operationId: 'train_model_v1',
  method: 'POST',
  path: '/train_model/v1' as const,
  kind: 'training',
  tag: 'Training',
  summary: 'Train a model',
  description:
    'Fine-tunes `base_model` on `images`. Request schema: `TrainModelPrompt`. Answers `{id, status}`; ' +
    'poll `GET /train_model/v1/status/{training_id}`.',
  request: TrainModelPrompt,
  requestName: 'TrainModelPrompt',
  responses: { 200: TrainAcceptedResponse, ...auth, 422: HTTPValidationError },
  headers: SUBMIT_HEADERS,
  status: {
    operationId: 'train_model_v1_status',
    ...withParams('/train_model/v1/status/{training_id}'),
    summary: 'Status of a training',
    description:
      'Answers `{status}` (queued, initialising, running or unknown) until the training ends, then ' +
      '`{status: "completed", model_id, training_duration_seconds}` or `{status: "failed", error}`.',
    responses: {
      200: Type.Union([TrainPendingResponse, TrainSuccessResponse, TrainFailureResponse]),
      ...auth,
      404: HTTPError,
    },
  },
  imageFields: imageFieldsOf(TrainModelPrompt),
  example: EXAMPLES['/train_model/v1'],
} satisfies Endpoint;

/** Every task-creating endpoint: each has a status path, a cancel path and a status stream. */
const taskEndpoints: readonly Endpoint[] = [...generations, training];

const upload = {
  operationId: 'upload_images',
  method: 'POST',
  path: '/upload_images' as const,
  kind: 'upload',
  tag: 'Utilities',
  summary: 'Upload images',
  description:
    "The path the original service's frontend uploads to; `/upload_images/v1` serves the same. " +
    'multipart/form-data with one `image_files` part per image; answers the public URLs to use in ' +
    'other requests.',
  aliases: [alias('/upload_images/v1')],
  multipart: UploadImagesBody,
  requestName: 'Body_upload_images',
  responses: { 200: UploadImagesResponse, ...auth, 422: HTTPValidationError },
  imageFields: [],
} satisfies Endpoint;

const records = [
  record(
    '/models/v1',
    'List your models',
    'Designed path: the models you loaded or trained, as `UserModelInfo`.',
    UserModelList,
    'Custom models',
  ),
  record(
    '/models/v1/{model_id}',
    'Get a model',
    'Designed path: one of your models, as `UserModel`.',
    UserModel,
    'Custom models',
  ),
  {
    ...record(
      '/images/v1',
      'List your images',
      'Designed path: your generated images, newest first, as `UserImage`. Query `limit` (1 to 100, ' +
        'default 20) and `before` (an image_id: answers images older than it).',
      UserImageList,
    ),
    query: ImagesQuery(),
  },
  {
    ...record(
      '/images/v1/{image_id}',
      'Get an image',
      "Designed path: one image, as `ImageInfo`. `/images/{image_id}` (the original service's " +
        'frontend reads it there) answers the same.',
      ImageInfo,
    ),
    aliases: [alias('/images/{image_id}')],
  },
  record(
    '/subscription/v1',
    'Your subscription',
    'Designed path: your plan, as `UserSubscription`.',
    UserSubscription,
  ),
  ...frontendAccountPaths(),
  record(
    '/batches/v1/{batch_id}',
    'Tasks of a batch',
    'Designed path: every task submitted with this `batch_id`, with its status.',
    BatchTasks,
  ),
  record(
    '/webhook_secret/v1',
    'Webhook signing secret',
    'Designed path: the Standard Webhooks secret that signs your webhook deliveries.',
    WebhookSecret,
  ),
  {
    ...record(
      '/tasks/v1',
      'List your tasks',
      'Designed path: your tasks newest first, each with its pipeline, state, the engine that ran it ' +
        '(and whether its result is a placeholder), times and status path. ' +
        'Filter with `status`, `pipeline` and `batch_id`; page with `limit` (1 to 100, default 20) and ' +
        'the `next_cursor` of the previous page as `cursor`.',
      TaskList,
    ),
    query: TasksQuery(),
  },
  {
    ...record(
      '/webhooks/v1/deliveries',
      'Your webhook deliveries',
      'Designed path: the webhook calls of your tasks, newest first, each with its event, status ' +
        '(pending, delivered or failed) and its attempts (time, HTTP status, error; the newest 25). ' +
        "Query `task_id` (only that task's); page with `limit` (1 to 100, default 20) and the " +
        '`next_cursor` of the previous page as `cursor`.',
      WebhookDeliveryList,
    ),
    query: DeliveriesQuery(),
  },
  {
    ...record(
      '/webhooks/v1/deliveries/{delivery_id}/redeliver',
      'Redeliver a webhook',
      'Designed path: sends a delivered or failed webhook call again, the same body under the same ' +
        '`webhook-id`, as a new attempt signed with your secret as it is now. Answers the delivery, ' +
        'pending; one that is still pending answers 409 (its next attempt is already planned). ' +
        'One delivery may be sent again 10 times in 24 hours, and one key may ask 20 times a minute ' +
        '(the defaults of the service); past either the answer is 429 with `Retry-After`.',
      WebhookDelivery,
    ),
    method: 'POST' as const,
    operationId: 'redeliver_webhooks_v1_deliveries_by_delivery_id',
    responses: { 200: WebhookDelivery, ...auth, 404: HTTPError, 409: HTTPError, 429: HTTPError },
  },
  {
    ...record(
      '/usage/v1',
      'Your usage',
      'Designed path: your finished tasks by UTC day and pipeline: how many, how many succeeded and ' +
        'failed, the images and pixels they produced, and their run and queue seconds. Query `from` ' +
        'and `to`, days as `YYYY-MM-DD`, both counted (default: the last 30 days; at most 366 days).',
      UsageReport,
    ),
    query: UsageQuery(),
  },
];

/**
 * The account paths the original service's frontend reads, keyed by the account id: each answers
 * for your own id only (another account's id answers 404, as a missing one), with the records the
 * designed paths answer.
 */
function frontendAccountPaths() {
  const own = "The path of the original service's frontend; your own `user_id` only (another answers 404).";
  return [
    record(
      '/user/{user_id}',
      'Your account',
      `${own} Your id, your plan and when it ends, and the key of this request, as \`UserAccount\`.`,
      UserAccount,
    ),
    {
      ...record(
        '/user/{user_id}/images',
        'Your images (by account id)',
        `${own} The same page of your images as /images/v1, with its query: \`UserImage\` records, ` +
          'newest first.',
        UserImageList,
      ),
      query: ImagesQuery(),
    },
    record(
      '/user/{user_id}/models',
      'Your models (by account id)',
      `${own} Your models as /models/v1 lists them, as \`UserModelInfo\`.`,
      UserModelList,
      'Custom models',
    ),
    record(
      '/user/{user_id}/subscriptions',
      'Your subscriptions',
      `${own} Every subscription of your account, newest first (at most 100), as \`UserSubscription\`: ` +
        'the active one and those that ended, with their enterprise server (`pod_id`).',
      UserSubscriptionList,
    ),
  ];
}

function DeliveriesQuery() {
  return Type.Object({
    task_id: Type.Optional(Type.String({ description: "Only this task's deliveries." })),
    limit: Type.Optional(Int({ ge: 1, le: 100, default: 20 })),
    cursor: Type.Optional(Type.String({ description: 'The `next_cursor` of the previous page.' })),
  });
}

function UsageQuery() {
  return Type.Object({
    from: Type.Optional(Type.String({ description: 'The first day, `YYYY-MM-DD` (UTC).' })),
    to: Type.Optional(Type.String({ description: 'The last day, `YYYY-MM-DD` (UTC); default today.' })),
  });
}

function ImagesQuery() {
  return Type.Object({
    limit: Type.Optional(Int({ ge: 1, le: 100, default: 20 })),
    before: Type.Optional(Type.String({ description: 'image_id cursor: answer images older than it.' })),
  });
}

function TasksQuery() {
  return Type.Object({
    status: Type.Optional(Enum(TASK_STATES, { description: 'Only tasks in this state.' })),
    pipeline: Type.Optional(
      Enum(
        taskEndpoints.map((endpoint) => endpoint.path),
        { description: 'Only tasks submitted to this path.' },
      ),
    ),
    batch_id: Type.Optional(Type.String({ description: 'Only tasks submitted with this `batch_id`.' })),
    limit: Type.Optional(Int({ ge: 1, le: 100, default: 20 })),
    cursor: Type.Optional(Type.String({ description: 'The `next_cursor` of the previous page.' })),
  });
}

/** The status stream's query: whether the task's previews come too. */
const EventsQuery = Type.Object({
  previews: Type.Optional(
    Bool(
      false,
      'Send the picture as it forms as `preview` events (JPEG), where the engine sends previews. ' +
        'Off by default: a client that reads every event as a status sees only statuses.',
    ),
  ),
});

/**
 * The designed task-control paths of a task-creating endpoint, in the style of its status path:
 * `POST <path>/cancel/{task_id}` and `GET <path>/status/{task_id}/events` (training: `{training_id}`).
 */
function taskControl(endpoint: Endpoint): Endpoint[] {
  const status = endpoint.status!;
  const param = /\{(\w+)\}$/.exec(status.path)![1]!;
  const training = endpoint.kind === 'training';
  const failed = training ? '`{status: "failed", error}`' : '`{status: "FAILURE", error}`';
  const cancel = withParams(`${endpoint.path}/cancel/{${param}}`);
  const events = withParams(`${status.path}/events`);
  return [
    {
      operationId: operationId(cancel.path),
      method: 'POST',
      ...cancel,
      kind: 'cancel',
      taskPath: endpoint.path,
      tag: endpoint.tag,
      summary: `Cancel: ${endpoint.summary}`,
      description:
        `Designed path: cancels a queued or running task of ${endpoint.path} (any of your tasks: the id ` +
        'names it, as at the status path). A queued task ends at once, a ' +
        'running one is stopped where its engine stands and its outputs are never served. Answers the ' +
        `final status, ${failed} with error \`${CANCELLED_ERROR}\`; its webhook fires once. A task ` +
        'that already ended answers 409.',
      responses: {
        200: training ? TrainFailureResponse : TaskErrorResponse,
        ...auth,
        404: HTTPError,
        409: HTTPError,
      },
      imageFields: [],
    },
    {
      operationId: operationId(events.path),
      method: 'GET',
      ...events,
      kind: 'events',
      taskPath: endpoint.path,
      tag: endpoint.tag,
      summary: `Status events: ${endpoint.summary}`,
      description:
        `Designed path: the status of a ${endpoint.path} task (or any of yours, as the status path ` +
        'answers it) as Server-Sent Events. An event (`id` ' +
        'and `data`, the status body) at once and at every change of state or progress, the final status ' +
        'as the last event, then the stream ends; `: keep-alive` comments in between. Reconnect with ' +
        '`Last-Event-ID` to get only newer events: 204 when the final one was already received. With ' +
        '`previews=true`, the picture as it forms too, where the engine sends one (ComfyUI started with ' +
        'a preview method): `event: preview` events without an `id`, `data` ' +
        '`{"content_type": "image/jpeg", "image": "<base64>"}`, about two a second at most, the latest ' +
        'one at once to a stream that opens while the task runs.',
      query: EventsQuery,
      responses: { 200: TaskEventStream, ...auth, 404: HTTPError },
      responseMedia: 'text/event-stream',
      headers: [LAST_EVENT_ID],
      imageFields: [],
    },
  ];
}

/**
 * Deleting a model: its row, and its file in every model folder the ComfyUI servers read. A model
 * still loading, or named by a task of the owner's that has not ended, answers 409 rather than
 * failing that task.
 */
const deleteModel = {
  operationId: `delete_${operationId('/models/v1/{model_id}')}`,
  method: 'DELETE',
  ...withParams('/models/v1/{model_id}'),
  kind: 'delete',
  tag: 'Custom models',
  summary: 'Delete a model',
  description:
    'Designed path: deletes one of your models and its stored file. Answers `{model_id, deleted: true}`; ' +
    "another account's model answers 404 like a missing one. A model that is still loading, or that a " +
    'queued or running task of yours names, answers 409 naming that task: cancel it or let it end first.',
  responses: { 200: DeletedModel, ...auth, 404: HTTPError, 409: HTTPError },
  imageFields: [],
} satisfies Endpoint;

export const endpoints: readonly Endpoint[] = [
  ...generations,
  training,
  upload,
  ...records,
  deleteModel,
  ...taskEndpoints.flatMap(taskControl),
];

/**
 * The rows with a request or an answer of their own, their paths and schemas kept as types: the
 * SDK derives its request and answer types from these rows (the task-control rows follow from the
 * task rows), so they cannot drift from what the server validates.
 */
export type TypedEndpoint =
  | (typeof generations)[number]
  | typeof training
  | typeof upload
  | (typeof records)[number];

type RequestRow = Extract<TypedEndpoint, { request: TSchema }>;

/** A path that takes a JSON request body (a pipeline, e.g. `/sd/text2image/v1`). */
export type RequestPath = RequestRow['path'];

// One map over the paths, computed once: a generic use looks its type up instead of converting a
// schema each time.
type Requests = { [R in RequestRow as R['path']]: Static<R['request']> };

/** The JSON body `path` takes, as its schema types it (fields with a default stay optional). */
export type RequestOf<P extends RequestPath> = Requests[P];

// A path with two methods (`/models/v1/{model_id}`: GET and DELETE) is found by its first row; an
// alias path finds the row it serves.
const byPath = new Map<string, Endpoint>();
for (const endpoint of endpoints) {
  for (const path of [endpoint.path, ...(endpoint.aliases ?? []).map((other) => other.path)]) {
    if (!byPath.has(path)) byPath.set(path, endpoint);
  }
}

export function endpointByPath(path: string): Endpoint | undefined {
  return byPath.get(path);
}
