import type { FastifyInstance, FastifyReply } from 'fastify';
import { FILES_PATH, isValidBlobKey } from '../../storage/blob-keys.ts';
import type { StoredBlob } from '../../storage/blob-store.ts';
import { sampleImage } from '../../storage/sample-images.ts';
import type { BlobStore } from '../../tasks/types.ts';

/**
 * GET /files/<key>: serves stored blobs (outputs and uploads). The key is the credential: it is
 * unguessable, so the route needs no API key and links can be handed to browsers as they are.
 * A store that hands out its own download URLs (a bucket with FILES_VIA=presigned) gets a 302 to
 * a fresh one instead: the link in a task's result stays the same while each redirect expires.
 * The API's sample images (`/files/samples/...`) are served from the program, whatever the store.
 */
export function registerFileRoutes(app: FastifyInstance, store: BlobStore): void {
  // queued_image_urls links answer 404 until their task succeeds: never cache that.
  const notFound = (reply: FastifyReply) =>
    reply.code(404).header('cache-control', 'no-store').send({ detail: 'File not found' });
  app.get(`${FILES_PATH}*`, async (request, reply) => {
    const key = (request.params as { '*': string })['*'];
    if (!isValidBlobKey(key)) return notFound(reply);
    const sample = await sampleImage(key);
    if (sample) return sendBlob(reply, sample);
    if (store.downloadRedirect) {
      const location = await store.downloadRedirect(key);
      // The redirect is as short-lived as its signature: never cached.
      return location ? reply.header('cache-control', 'no-store').redirect(location, 302) : notFound(reply);
    }
    const blob = await store.get(key);
    if (!blob) return notFound(reply);
    return sendBlob(reply, blob);
  });
}

function sendBlob(reply: FastifyReply, blob: StoredBlob): FastifyReply {
  return reply
    .header('content-type', blob.contentType)
    .header('cache-control', 'public, max-age=31536000, immutable')
    .header('x-content-type-options', 'nosniff')
    .send(blob.data);
}
