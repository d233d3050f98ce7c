import type { FastifyInstance } from 'fastify';
import { FILES_PATH, isValidBlobKey } from '../../storage/blob-keys.ts';
import type { BlobStore } from '../../tasks/types.ts';

/**
 * GET /files/<key>: serves stored blobs (outputs and uploads). The key is the credential: it is
 * unguessable, so the route needs no API key and links can be handed to browsers as they are.
 */
export function registerFileRoutes(app: FastifyInstance, store: BlobStore): void {
  app.get(`${FILES_PATH}*`, async (request, reply) => {
    const key = (request.params as { '*': string })['*'];
    const blob = isValidBlobKey(key) ? await store.get(key) : null;
    if (!blob) {
      // queued_image_urls links answer 404 until their task succeeds: never cache that.
      return reply.code(404).header('cache-control', 'no-store').send({ detail: 'File not found' });
    }
    return reply
      .header('content-type', blob.contentType)
      .header('cache-control', 'public, max-age=31536000, immutable')
      .header('x-content-type-options', 'nosniff')
      .send(blob.data);
  });
}
