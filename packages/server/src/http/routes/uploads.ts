import multipart from '@fastify/multipart';
import { BODY_PARSE_ERROR, type Endpoint, type ValidationErrorEntry } from '@imagegen/contract';
import type { Pool } from '@imagegen/db';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { warmDecodeChecks } from '../../fetch/decode-check.ts';
import { DEFAULT_MAX_IMAGE_BYTES, InputFetchError, inspectImage } from '../../fetch/image-fetcher.ts';
import type { ImageHeader } from '../../fetch/image-header.ts';
import { saveUploads } from '../../records/save-uploads.ts';
import type { BlobStore } from '../../tasks/types.ts';
import { callerOf } from '../api-key-auth.ts';
import { routeSchema } from '../contract-validation.ts';
import { HttpError, MISSING_BOUNDARY } from '../http-errors.ts';
import { contentTypeOf, ReceivedBody } from '../request-bodies.ts';
import { formKind, urlencodedFieldNames } from './upload-form.ts';

/** The most images one upload may carry. Each is capped like a fetched input image. */
const MAX_UPLOAD_FILES = 16;

/** The bytes of each `image_files` file, by request, from the moment the form is read. */
const uploadedFiles = new WeakMap<FastifyRequest, Buffer[]>();

/** pydantic's words for an `image_files` member that is a text field, not a file. */
const NOT_A_FILE = {
  msg: "Expected UploadFile, received: <class 'str'>",
  type: 'value_error',
} as const;

/**
 * preValidation: reads the form as the original service does (upload-form.ts), keeps the bytes of
 * each `image_files` file aside and leaves in `request.body` the fields as the contract's multipart
 * schema names them (a file stands for its file by its name), so Fastify's validator hook checks
 * the upload like any body: a form without `image_files` (a JSON or text body reads as an empty
 * form) answers 422 `field required` at ["body", "image_files"]. An `image_files` text field
 * answers pydantic's `Expected UploadFile` at its index.
 */
async function readForm(request: FastifyRequest): Promise<void> {
  const files: Buffer[] = [];
  const names: string[] = [];
  const textAt: number[] = [];
  const kind = formKind(contentTypeOf(request));
  if (kind === 'multipart without boundary') throw new HttpError(400, MISSING_BOUNDARY);
  if (kind === 'multipart') {
    if (!request.isMultipart()) throw new HttpError(400, BODY_PARSE_ERROR);
    let started = request.headers['content-length'] === '0';
    try {
      for await (const part of request.parts()) {
        started = true;
        if (part.type === 'file') {
          const data = await part.toBuffer(); // every file part is drained, used or not
          if (part.fieldname !== 'image_files') continue;
          files.push(data);
          names.push(part.filename || 'image');
        } else if (part.fieldname === 'image_files') {
          textAt.push(names.length);
          names.push('');
        }
      }
    } catch (error) {
      // A body that ends early keeps the parts it finished, as python-multipart reads it for
      // FastAPI (the part cut short is dropped). Limits keep their answers (http-errors.ts); any
      // other body the multipart parser cannot read is what FastAPI answers 400 for.
      if (!(started && endsEarly(error))) {
        if (error instanceof Error && !('code' in error)) throw new HttpError(400, BODY_PARSE_ERROR);
        throw error;
      }
    }
  } else if (kind === 'urlencoded' && request.body instanceof ReceivedBody) {
    for (const name of urlencodedFieldNames(request.body.bytes)) {
      if (name !== 'image_files') continue;
      textAt.push(names.length);
      names.push('');
    }
  }
  if (textAt.length > 0) {
    throw new HttpError(
      422,
      textAt.map((n) => ({ loc: ['body', 'image_files', n], ...NOT_A_FILE })),
    );
  }
  uploadedFiles.set(request, files);
  request.body = names.length > 0 ? { image_files: names } : {};
}

/** The multipart parser's words for a body that stops before its closing boundary. */
function endsEarly(error: unknown): boolean {
  return (
    error instanceof Error && !('code' in error) && /unexpected end of multipart data/i.test(error.message)
  );
}

/**
 * POST the upload endpoint: multipart `image_files` parts → stored blobs → `image_urls` that work
 * as inputs of any request. Every part goes through the same inspection and caps as a fetched
 * input image (size, sniffed type, the header's pixel, side and aspect limits, then one full
 * decode in a decode process) before anything is stored, so a bad part leaves nothing behind and
 * an uploaded image always works as an input. That check is the only decode an upload gets: a
 * task naming it reads its header alone (fetch/stored-files.ts).
 *
 * The endpoint gets a scope of its own, where @fastify/multipart lives: its hooks would otherwise
 * run on every request of the API.
 */
export async function registerUploadEndpoint(
  app: FastifyInstance,
  endpoint: Endpoint,
  options: UploadOptions,
): Promise<void> {
  // The decode process starts now, so the first upload does not wait for it.
  warmDecodeChecks();
  await app.register(async (uploads) => {
    await uploads.register(multipart, {
      limits: { fileSize: DEFAULT_MAX_IMAGE_BYTES, files: MAX_UPLOAD_FILES, fields: 32, parts: 64 },
    });
    registerUploadRoute(uploads, endpoint, options);
  });
}

interface UploadOptions {
  pool: Pool;
  store: BlobStore;
  publicUrl: string;
}

/** The upload at its path and at each alias (PathAlias): one handler, one validation. */
function registerUploadRoute(app: FastifyInstance, endpoint: Endpoint, options: UploadOptions): void {
  const paths = [endpoint.path, ...(endpoint.aliases ?? []).map((alias) => alias.path)];
  for (const path of paths) {
    app.post(path, { schema: routeSchema(endpoint), preValidation: readForm }, (request, reply) =>
      storeUpload(request, reply, options),
    );
  }
}

async function storeUpload(
  request: FastifyRequest,
  reply: FastifyReply,
  options: UploadOptions,
): Promise<{ image_urls: string[] }> {
  const ownerId = callerOf(request).ownerId;
  const problems: ValidationErrorEntry[] = [];
  const images: { data: Buffer; header: ImageHeader }[] = [];
  // A client that leaves stops the checks still to run (a decode is stopped with its process).
  const left = new AbortController();
  const onClose = () => left.abort(new Error('the client left'));
  reply.raw.once('close', onClose);
  try {
    for (const [n, data] of (uploadedFiles.get(request) ?? []).entries()) {
      try {
        images.push({ data, header: await inspectImage(data, `image_files[${n}]`, left.signal) });
      } catch (error) {
        if (!(error instanceof InputFetchError)) throw error;
        problems.push({ loc: ['body', 'image_files', n], msg: error.reason, type: 'value_error.image' });
      }
    }
  } finally {
    reply.raw.off('close', onClose);
  }
  if (problems.length > 0) throw new HttpError(422, problems);

  return {
    image_urls: await saveUploads(
      options,
      ownerId,
      images.map(({ data, header }) => ({ data, contentType: header.contentType })),
    ),
  };
}
