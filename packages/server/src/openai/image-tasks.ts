import { compileValidator, type Endpoint, endpointByPath } from '@imagegen/contract';
import type { EngineRegistry } from '@imagegen/engines';
import type { FastifyReply, FastifyRequest } from 'fastify';
import sharp from 'sharp';
import { callerOf } from '../http/api-key-auth.ts';
import { HttpError } from '../http/http-errors.ts';
import { queueTask, type TaskRouteOptions } from '../http/routes/tasks.ts';
import { idempotencyKey } from '../http/task-headers.ts';
import { downloadUrl } from '../storage/blob-keys.ts';
import type { TaskStatus } from '../tasks/index.ts';
import type { BlobStore } from '../tasks/types.ts';
import type { ImageRequest, OutputFormat } from './image-request.ts';
import { type ImageSize, nearestSize, parseSize } from './image-sizes.ts';
import type { OpenAiModel, OpenAiModels } from './model-table.ts';
import { invalidRequest, OpenAiError } from './openai-errors.ts';

/**
 * An OpenAI Images API request as one of our tasks: the pipeline input its model's table entry
 * makes of it (checked by the pipeline's own validator, and by the engine that serves it), queued
 * as any submission is (same keys, queue, fairness and plan caps), waited for, and answered as
 * OpenAI answers: `created` and `data[]`, each image a `url` or its `b64_json`.
 */

export interface OpenAiOptions
  extends Pick<TaskRouteOptions, 'pool' | 'publicUrl' | 'watcher' | 'metrics' | 'closing'> {
  readonly store: BlobStore;
  readonly models: OpenAiModels;
  /** How long a request waits for its task before answering the timeout error (default 300 s). */
  readonly waitMs: number;
  readonly admit?: EngineRegistry['admit'];
}

/** The model a request names, or 400 naming every model there is. */
export function modelOf(options: OpenAiOptions, name: string | undefined): OpenAiModel {
  const model = options.models.find(name);
  if (model) return model;
  throw invalidRequest(
    `Invalid value: '${name}'. Supported values are: ${options.models.names.map((n) => `'${n}'`).join(', ')}.`,
    'model',
  );
}

/** The largest `samples` a pipeline takes (its schema's bound). */
function maxSamples(endpoint: Endpoint): number {
  const samples = (endpoint.request as { properties?: Record<string, { maximum?: number }> }).properties
    ?.samples;
  return samples?.maximum ?? 1;
}

/**
 * The input of `pipeline` for this request: the table's fixed fields, the prompt, `n` as
 * `samples`, the size nearest the one asked for (for `auto`: the model's first, or for an edit the
 * one nearest the input image's shape), the quality's steps, and an edit's images; checked by the
 * pipeline's validator (defaults filled) and by the engine that serves it.
 */
export function pipelineInput(
  options: OpenAiOptions,
  model: OpenAiModel,
  pipeline: string,
  request: ImageRequest,
  edit?: { readonly init_image: string; readonly mask_image?: string; readonly size: ImageSize },
): Record<string, unknown> {
  const endpoint = endpointByPath(pipeline)!;
  const most = maxSamples(endpoint);
  if (request.n > most) {
    throw invalidRequest(
      `Invalid 'n': model ${model.id} draws at most ${most} images per request, but got ${request.n} instead.`,
      'n',
      'integer_above_max_value',
    );
  }
  const sizes = model.sizes.map((text) => parseSize(text)!);
  const size =
    request.size !== 'auto'
      ? nearestSize(request.size, sizes)
      : edit
        ? nearestSize(edit.size, sizes)
        : sizes[0]!;
  const steps = model.steps?.[request.quality];
  const body = {
    ...model.fields,
    prompt: request.prompt,
    samples: request.n,
    width: size.width,
    height: size.height,
    ...(steps === undefined ? {} : { num_inference_steps: steps }),
    ...(edit ? { init_image: edit.init_image } : {}),
    ...(edit?.mask_image ? { mask_image: edit.mask_image } : {}),
  };
  const checked = compileValidator(endpoint.request!, 'body')(body);
  if (!checked.ok) {
    const [problem] = checked.detail;
    const field = String(problem?.loc[1] ?? '');
    // The table's own fields are the operator's, checked at start; what fails here is the request's.
    throw invalidRequest(
      `Invalid '${field}' for model ${model.id}: ${problem?.msg}.`,
      field === 'samples' ? 'n' : field,
    );
  }
  const refusal = options.admit?.(pipeline, checked.value);
  if (refusal) throw invalidRequest(`Model ${model.id} cannot run this request: ${refusal.message}`, 'model');
  return checked.value;
}

/**
 * Queues the task and waits for it to end (OPENAI_WAIT_SECONDS at most). Past the wait, and when
 * the API closes, the answer is a timeout error naming the task, which goes on and stays pollable
 * at its status path; `x-should-retry: false` keeps OpenAI's SDKs from queueing it again.
 */
export async function runToEnd(
  options: OpenAiOptions,
  request: FastifyRequest,
  reply: FastifyReply,
  pipeline: string,
  input: Record<string, unknown>,
): Promise<{ task: TaskStatus; created: number }> {
  const ownerId = callerOf(request).ownerId;
  const created = Math.floor(Date.now() / 1000);
  let id: string;
  try {
    const { submitted } = await queueTask(
      options,
      request,
      {
        ownerId,
        endpoint: pipeline,
        kind: 'generation',
        input,
        publicUrl: options.publicUrl,
        requestId: request.id,
      },
      idempotencyKey(request),
    );
    id = submitted.id;
  } catch (error) {
    if (error instanceof HttpError && error.statusCode === 422) {
      throw invalidRequest(
        'The Idempotency-Key was used before with another request.',
        null,
        'idempotency_key_reused',
      );
    }
    throw error;
  }
  const gone = new AbortController();
  const onClose = () => gone.abort();
  reply.raw.once('close', onClose);
  let task: TaskStatus | null;
  try {
    task = await options.watcher.waitForEnd(
      ownerId,
      id,
      options.waitMs,
      AbortSignal.any([gone.signal, options.closing]),
    );
  } finally {
    reply.raw.off('close', onClose);
  }
  if (!task) {
    const seconds = Math.round(options.waitMs / 1000);
    throw new OpenAiError(
      504,
      `The image task ${id} did not end within ${seconds} s; it goes on: poll GET ${pipeline}/status/${id} ` +
        'with the same key for its images.',
      'timeout',
      null,
      'task_still_running',
      { 'x-should-retry': 'false' },
    );
  }
  if (task.state !== 'succeeded') {
    throw new OpenAiError(
      500,
      `The image task ${id} failed: ${task.error ?? 'no reason given'}`,
      'server_error',
      null,
      'task_failed',
      { 'x-should-retry': 'false' },
    );
  }
  return { task, created };
}

const MEDIA: Record<OutputFormat, string> = { png: 'image/png', jpeg: 'image/jpeg', webp: 'image/webp' };

/**
 * OpenAI's answer for a task that succeeded. `url`: the task's own download links. `b64_json`: the
 * images themselves, in `output_format` when one was asked for (JPEG and WebP at
 * `output_compression`). Names of GPT image models get what OpenAI's GPT image answers carry
 * besides: `b64_json` by default, and the `background`, `output_format`, `quality` and `size` used.
 */
export async function imagesAnswer(
  options: OpenAiOptions,
  request: ImageRequest,
  task: TaskStatus,
  created: number,
  input: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const gptImage = (request.model ?? '').startsWith('gpt-image');
  const format = request.responseFormat ?? (gptImage ? 'b64_json' : 'url');
  const data =
    format === 'url'
      ? task.outputKeys.map((key) => ({ url: downloadUrl(options.publicUrl, key) }))
      : await Promise.all(
          task.outputKeys.map(async (key) => ({ b64_json: await encoded(options, key, request) })),
        );
  if (!gptImage) return { created, data };
  return {
    created,
    data,
    background: 'opaque',
    output_format: request.outputFormat ?? 'png',
    quality: request.quality,
    size: `${input.width}x${input.height}`,
  };
}

async function encoded(options: OpenAiOptions, key: string, request: ImageRequest): Promise<string> {
  const blob = await options.store.get(key);
  if (!blob) throw new OpenAiError(500, `An output of the task is missing (${key}).`, 'server_error');
  const wanted = request.outputFormat;
  if (!wanted || MEDIA[wanted] === blob.contentType) return blob.data.toString('base64');
  const quality = Math.max(1, request.outputCompression);
  const image = sharp(blob.data);
  const converted =
    wanted === 'png'
      ? image.png()
      : wanted === 'jpeg'
        ? image.flatten({ background: '#ffffff' }).jpeg({ quality })
        : image.webp({ quality });
  return (await converted.toBuffer()).toString('base64');
}
