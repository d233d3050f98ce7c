import multipart from '@fastify/multipart';
import type { Endpoint, ValidationErrorEntry } from '@imagegen/contract';
import type { Pool } from '@imagegen/db';
import type { InputImage } from '@imagegen/engines';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { DEFAULT_MAX_IMAGE_BYTES, InputFetchError, inspectImage } from '../../fetch/image-fetcher.ts';
import { insertUpload } from '../../records/sql/insertUpload.ts';
import { downloadUrl, extensionFor, newBlobKeys } from '../../storage/blob-keys.ts';
import type { BlobStore } from '../../tasks/types.ts';
import { callerOf } from '../api-key-auth.ts';
import { routeSchema } from '../contract-validation.ts';
import { HttpError, MISSING_BOUNDARY, NOT_MULTIPART, UNPARSABLE_BODY } from '../http-errors.ts';

/** The most images one upload may carry. Each is capped like a fetched input image. */
const MAX_UPLOAD_FILES = 16;

/** The bytes of each `image_files` part, by request, from the moment the parts are read. */
const uploadedFiles = new WeakMap<FastifyRequest, Buffer[]>();

/**
 * preValidation: reads the multipart parts, keeps the bytes of each `image_files` file aside and
 * leaves in `request.body` the fields as the contract's multipart schema names them (a file part
 * stands for its file by its name), so Fastify's validator hook checks the upload like any body:
 * no `image_files` part answers 422 `field required` at ["body", "image_files"].
 */
async function readParts(request: FastifyRequest): Promise<void> {
  if (!request.isMultipart()) throw new HttpError(415, NOT_MULTIPART);
  const files: Buffer[] = [];
  const names: string[] = [];
  try {
    for await (const part of request.parts()) {
      if (part.type !== 'file') continue;
      const data = await part.toBuffer(); // every file part is drained, used or not
      if (part.fieldname !== 'image_files') continue;
      files.push(data);
      names.push(part.filename || 'image');
    }
  } catch (error) {
    throw unreadableMultipart(error);
  }
  uploadedFiles.set(request, files);
  request.body = names.length > 0 ? { image_files: names } : {};
}

/**
 * What a multipart body the parser gave up on answers: the plugin's own errors (limits, a body that
 * is not multipart) carry a code and keep their answers; the parser's (no boundary, a body that
 * ends mid-part, a boundary over 256 characters) are the client's broken body, answered 400 as
 * FastAPI answers a form it cannot parse.
 */
function unreadableMultipart(error: unknown): unknown {
  if (error instanceof Error && 'code' in error) return error;
  const message = error instanceof Error ? error.message : '';
  return new HttpError(400, message.includes('Boundary not found') ? MISSING_BOUNDARY : UNPARSABLE_BODY);
}

/**
 * POST the upload endpoint: multipart `image_files` parts → stored blobs → `image_urls` that work
 * as inputs of any request. Every part goes through the same inspection and caps as a fetched
 * input image (size, sniffed type, pixel cap, one full decode) before anything is stored, so a bad
 * part leaves nothing behind and an uploaded image always works as an input.
 *
 * The endpoint gets a scope of its own, where @fastify/multipart lives: its hooks would otherwise
 * run on every request of the API.
 */
export async function registerUploadEndpoint(
  app: FastifyInstance,
  endpoint: Endpoint,
  options: { pool: Pool; store: BlobStore; publicUrl: string },
): Promise<void> {
  await app.register(async (uploads) => {
    uploads.removeContentTypeParser('multipart/form-data');
    await uploads.register(multipart, {
      limits: { fileSize: DEFAULT_MAX_IMAGE_BYTES, files: MAX_UPLOAD_FILES, fields: 32, parts: 64 },
    });
    registerUploadRoute(uploads, endpoint, options);
  });
}

function registerUploadRoute(
  app: FastifyInstance,
  endpoint: Endpoint,
  options: { pool: Pool; store: BlobStore; publicUrl: string },
): void {
  app.post(endpoint.path, { schema: routeSchema(endpoint), preValidation: readParts }, async (request) => {
    const ownerId = callerOf(request).ownerId;
    const problems: ValidationErrorEntry[] = [];
    const images: Omit<InputImage, 'url'>[] = [];
    for (const [n, data] of (uploadedFiles.get(request) ?? []).entries()) {
      try {
        images.push(await inspectImage(data, `image_files[${n}]`));
      } catch (error) {
        if (!(error instanceof InputFetchError)) throw error;
        problems.push({ loc: ['body', 'image_files', n], msg: error.reason, type: 'value_error.image' });
      }
    }
    if (problems.length > 0) throw new HttpError(422, problems);

    const urls: string[] = [];
    const keys = newBlobKeys(images.map((image, n) => `upload${n}.${extensionFor(image.contentType)}`));
    for (const [n, image] of images.entries()) {
      const key = keys[n]!;
      await options.store.put(key, image.data, image.contentType);
      await insertUpload(options.pool, {
        ownerId,
        blobKey: key,
        contentType: image.contentType,
        sizeBytes: image.data.length,
      });
      urls.push(downloadUrl(options.publicUrl, key));
    }
    return { image_urls: urls };
  });
}
