import multipart from '@fastify/multipart';
import type { FastifyInstance, onRequestHookHandler } from 'fastify';
import { DEFAULT_MAX_IMAGE_BYTES, InputFetchError, inspectImage } from '../fetch/image-fetcher.ts';
import { callerOf } from '../http/api-key-auth.ts';
import type { BodyLimits } from '../http/http-errors.ts';
import { ReceivedBody } from '../http/request-bodies.ts';
import { saveUploads } from '../records/save-uploads.ts';
import { readEditForm } from './edit-form.ts';
import { repaintMask } from './edit-mask.ts';
import { jsonFields, readImageRequest } from './image-request.ts';
import { imagesAnswer, modelOf, type OpenAiOptions, pipelineInput, runToEnd } from './image-tasks.ts';
import { answerOpenAiErrors, invalidRequest, OpenAiError } from './openai-errors.ts';

/**
 * The OpenAI Images API under `/v1`, for the tools that generate images through it (Open WebUI,
 * LibreChat, OpenAI's SDKs...): `POST /v1/images/generations`, `POST /v1/images/edits`,
 * `GET /v1/models` and `GET /v1/models/{model}`. Its own scope: its key hook (the API's, sharing
 * one allowance for wrong keys), error shapes and form reader run for these paths only, never for
 * the API's own.
 */

/** When the table's models were "created", as `GET /v1/models` says: the API's start. */
const STARTED = Math.floor(Date.now() / 1000);

export async function openAiRoutes(
  scope: FastifyInstance,
  options: OpenAiOptions & { authenticate: onRequestHookHandler; limits: BodyLimits },
): Promise<void> {
  scope.decorateRequest('caller', null);
  answerOpenAiErrors(scope, options.limits);
  // A browser client (OpenAI's SDK with dangerouslyAllowBrowser) sends headers of its own.
  scope.options('/*', async (request, reply) =>
    reply
      .code(204)
      .header('access-control-allow-methods', 'GET, POST, OPTIONS')
      .header('access-control-allow-headers', request.headers['access-control-request-headers'] ?? '*')
      .header('access-control-max-age', '86400')
      .send(),
  );
  scope.addHook('onRequest', function authenticateOpenAi(request, reply, done) {
    if (request.method === 'OPTIONS') return done();
    options.authenticate.call(this, request, reply, done);
  });

  scope.get('/models', async () => ({
    object: 'list',
    data: options.models.names.map((id) => modelEntry(id)),
  }));
  scope.get('/models/:model', async (request) => {
    const name = (request.params as { model: string }).model;
    if (!options.models.find(name)) {
      throw new OpenAiError(
        404,
        `The model '${name}' does not exist`,
        'invalid_request_error',
        'model',
        'model_not_found',
      );
    }
    return modelEntry(name);
  });

  scope.post('/images/generations', async (request, reply) => {
    const body = request.body instanceof ReceivedBody ? request.body.bytes : Buffer.alloc(0);
    const wanted = readImageRequest(jsonFields(body), false);
    const model = modelOf(options, wanted.model);
    const input = pipelineInput(options, model, model.generations, wanted);
    const { task, created } = await runToEnd(options, request, reply, model.generations, input);
    return imagesAnswer(options, wanted, task, created, input);
  });

  // Edits read a form of image files: @fastify/multipart lives in a scope of their own.
  await scope.register(async (edits) => {
    await edits.register(multipart, {
      limits: { fileSize: DEFAULT_MAX_IMAGE_BYTES, files: 17, fields: 32, parts: 64 },
    });
    edits.post('/images/edits', async (request, reply) => {
      const form = await readEditForm(request);
      const wanted = readImageRequest(form.fields, true);
      const model = modelOf(options, wanted.model);
      if (form.images.length === 0) {
        throw invalidRequest("Missing required parameter: 'image'.", 'image', 'missing_required_parameter');
      }
      if (form.images.length > 1) {
        throw invalidRequest(
          `Model ${model.id} edits one image; ${form.images.length} were sent.`,
          'image',
          'unsupported_value',
        );
      }
      const pipeline = form.mask ? model.edits?.mask : model.edits?.image;
      if (!pipeline) {
        const kind = form.mask ? 'with a mask' : 'without a mask';
        throw invalidRequest(`Model ${model.id} does not edit images ${kind}.`, 'model', 'unsupported_value');
      }
      const image = await inspected(form.images[0]!, 'image');
      const size = { width: image.width, height: image.height };
      const files = [image];
      if (form.mask) {
        await inspected(form.mask, 'mask');
        const mask = await repaintMask(form.mask, size);
        files.push({ data: mask, contentType: 'image/png', ...size });
      }
      const [initImage, maskImage] = await saveUploads(options, callerOf(request).ownerId, files);
      const input = pipelineInput(options, model, pipeline, wanted, {
        init_image: initImage!,
        ...(maskImage ? { mask_image: maskImage } : {}),
        size,
      });
      const { task, created } = await runToEnd(options, request, reply, pipeline, input);
      return imagesAnswer(options, wanted, task, created, input);
    });
  });
}

function modelEntry(id: string) {
  return { id, object: 'model', created: STARTED, owned_by: 'imagegen' };
}

/** An image sent with an edit, held to the caps of any input image (type, size, pixels, whole). */
async function inspected(data: Buffer, field: string) {
  try {
    return { data, ...(await inspectImage(data, field)) };
  } catch (error) {
    if (error instanceof InputFetchError)
      throw invalidRequest(`Invalid '${field}': ${error.reason}`, field, 'invalid_image');
    throw error;
  }
}
