import { compileRequestValidator, type Endpoint } from '@imagegen/contract';
import type { FastifyInstance } from 'fastify';
import sharp from 'sharp';
import type { Pool } from '../../db/pool.ts';
import {
  describeStart,
  SHARP_FORMAT,
  type SniffedImageType,
  sniffImageType,
} from '../../fetch/image-sniff.ts';
import { insertUpload } from '../../records/sql/insertUpload.ts';
import { downloadUrl, extensionFor, newBlobKeys } from '../../storage/blob-keys.ts';
import type { BlobStore } from '../../tasks/types.ts';
import { callerOf } from '../api-key-auth.ts';

/** The same caps the input fetcher applies, so an uploaded image always works as an input. */
export const MAX_UPLOAD_BYTES = 20 * 1024 * 1024;
export const MAX_UPLOAD_FILES = 16;
const MAX_PIXELS = 50_000_000;

/**
 * POST the upload endpoint: multipart `image_files` parts → stored blobs → `image_urls` that work
 * as inputs of any request. Every part is read and checked before anything is stored, so a bad
 * part leaves nothing behind.
 */
export function registerUploadEndpoint(
  app: FastifyInstance,
  endpoint: Endpoint,
  options: { pool: Pool; store: BlobStore; publicUrl: string },
): void {
  const validate = compileRequestValidator(endpoint);
  app.post(endpoint.path, async (request, reply) => {
    const caller = callerOf(request);
    if (!request.isMultipart()) {
      return reply.code(415).send({ detail: 'Uploads must be multipart/form-data with image_files parts' });
    }
    const files: { data: Buffer; filename: string }[] = [];
    for await (const part of request.parts()) {
      if (part.type === 'file' && part.fieldname === 'image_files') {
        files.push({ data: await part.toBuffer(), filename: part.filename });
      } else if (part.type === 'file') {
        await part.toBuffer(); // drain parts we do not use
      }
    }
    const checked = validate({ image_files: files.map((file) => file.filename || 'image') });
    if (!checked.ok) return reply.code(422).send({ detail: checked.detail });

    const problems = [];
    const images: { data: Buffer; contentType: SniffedImageType }[] = [];
    for (const [n, file] of files.entries()) {
      const verdict = await checkImage(file.data);
      if ('problem' in verdict) {
        problems.push({ loc: ['body', 'image_files', n], msg: verdict.problem, type: 'value_error.image' });
      } else {
        images.push({ data: file.data, contentType: verdict.type });
      }
    }
    if (problems.length > 0) return reply.code(422).send({ detail: problems });

    const urls: string[] = [];
    const keys = newBlobKeys(images.map((image, n) => `upload${n}.${extensionFor(image.contentType)}`));
    for (const [n, image] of images.entries()) {
      const key = keys[n]!;
      await options.store.put(key, image.data, image.contentType);
      await insertUpload(options.pool, {
        ownerId: caller.ownerId,
        blobKey: key,
        contentType: image.contentType,
        sizeBytes: image.data.length,
      });
      urls.push(downloadUrl(options.publicUrl, key));
    }
    return { image_urls: urls };
  });
}

/** The sniffed type of a whole, decodable image, or why it is not one. */
async function checkImage(data: Buffer): Promise<{ type: SniffedImageType } | { problem: string }> {
  const problem = (text: string) => ({ problem: text });
  if (data.length === 0) return problem('the file is empty');
  const type = sniffImageType(data);
  if (!type) return problem(`not a PNG, JPEG, WebP or GIF image (it starts with ${describeStart(data)})`);
  try {
    const metadata = await sharp(data, { limitInputPixels: false }).metadata();
    if (metadata.format !== SHARP_FORMAT[type] || !metadata.width || !metadata.height) {
      return problem('the image header is inconsistent');
    }
    if (metadata.width * metadata.height > MAX_PIXELS) {
      return problem(`the image is ${metadata.width}×${metadata.height}, above the 50 megapixel limit`);
    }
    await sharp(data, { failOn: 'truncated', limitInputPixels: MAX_PIXELS }).stats();
  } catch {
    return problem('the image data is truncated or corrupt');
  }
  return { type };
}
