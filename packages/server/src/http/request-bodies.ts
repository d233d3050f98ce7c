import type { FastifyInstance, FastifyRequest } from 'fastify';

/**
 * The bytes of a request body and the Content-Type header they came with, unread: the route that
 * needs the body reads it the way the original service does (a JSON endpoint through the
 * contract's `readRequestBody`, the upload endpoint as a form), and a route without a body never
 * reads it, as FastAPI does not.
 */
export class ReceivedBody {
  constructor(
    readonly bytes: Buffer,
    readonly contentType: string | undefined,
  ) {}
}

/** A Content-Type Fastify routes as it is: `type/subtype` in token characters, then `;` or the end. */
const ROUTABLE_CONTENT_TYPE = /^[\w!#$%&'*+.^`|~-]+\/[\w!#$%&'*+.^`|~-]+[ \t]*(?:;|$)/;
/** What nearly every body comes with, routable as it is: no pattern to test. */
const JSON_TYPE = 'application/json';
/** What Fastify sees in place of a Content-Type it would refuse with 415 before any parser ran. */
const STAND_IN_CONTENT_TYPE = 'application/x-unparsed-content-type';

const originalContentTypes = new WeakMap<FastifyRequest, string>();

/** The Content-Type header the client sent (Fastify may have seen a stand-in for it). */
export function contentTypeOf(request: FastifyRequest): string | undefined {
  return originalContentTypes.get(request) ?? request.headers['content-type'];
}

/**
 * Every body is accepted whatever its Content-Type, as FastAPI accepts it: each arrives as a
 * {@link ReceivedBody} (up to `limit` bytes: larger answers 413). Scopes may add parsers of their
 * own (the upload endpoint's multipart parser). A Content-Type Fastify cannot parse (`garbage`,
 * `application/json/x`, an empty one) is set aside for {@link contentTypeOf} and replaced by a
 * stand-in, since Fastify would answer 415 before reaching a parser.
 */
/**
 * Reads a body elsewhere when it chooses to (large-bodies.ts: on a worker thread), answering what
 * the route's validator then receives; undefined leaves the body as it arrived.
 */
export type BodyReader = (request: FastifyRequest, body: ReceivedBody) => Promise<unknown> | undefined;

export function acceptEveryBody(app: FastifyInstance, limit: number, readElsewhere?: BodyReader): void {
  app.addHook('onRequest', function standInContentType(request, _reply, done) {
    const contentType = request.headers['content-type'];
    if (contentType !== undefined && contentType !== JSON_TYPE && !ROUTABLE_CONTENT_TYPE.test(contentType)) {
      originalContentTypes.set(request, contentType);
      request.headers['content-type'] = STAND_IN_CONTENT_TYPE;
    }
    done();
  });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: limit }, (request, bytes, done) => {
    const body = new ReceivedBody(bytes as Buffer, contentTypeOf(request));
    const reading = readElsewhere?.(request, body);
    if (reading === undefined) return done(null, body);
    reading.then(
      (value) => done(null, value),
      (error: Error) => done(error),
    );
  });
}
