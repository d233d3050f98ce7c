import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import FindMyWay, { type HTTPMethod } from 'find-my-way';

/**
 * What a path that is no route answers, as FastAPI (Starlette's router, `redirect_slashes`)
 * answers it. When the path's other form, without its trailing slashes or with one added, is a
 * route (for any method), the answer is a 307 to that form with an empty body: clients written
 * against the original service send `POST /load_model/v1/` as its docs print it, and a 307 makes
 * them repeat the same method and body there. The Location is absolute, built as Starlette builds
 * it from the request's scheme and Host header, with the query kept. `/` itself is never
 * redirected. Anything else answers 404 `{"detail":"Not Found"}`.
 *
 * Routes match as Starlette matches them: a `{name}` parameter is one non-empty segment of the
 * decoded path. Fastify's `:name` also takes an empty one (`/models/v1/`) or a decoded `%2F`, so
 * such a request is answered as matching no route: `GET /models/v1/` redirects to `/models/v1`.
 */
export function answerUnroutedPaths(app: FastifyInstance): void {
  // Every route but the bare wildcards, in a router of their own. The CORS preflight's `OPTIONS *`
  // matches every path, so it never makes a path a route; asking the API's own router for OPTIONS
  // would find it for every path as soon as any other route serves OPTIONS (the analytics
  // collector's preflight), and no path would ever be redirected.
  const routes = FindMyWay();
  const methods = new Set<string>();
  app.addHook('onRoute', (route) => {
    if (route.url === '*' || route.url === '/*') return;
    for (const method of [route.method].flat()) {
      methods.add(method);
      routes.on(method as HTTPMethod, route.url, () => {});
    }
  });

  const isRoute = (path: string): boolean => {
    for (const method of methods) {
      const found = routes.find(method as HTTPMethod, path);
      if (found && segmentParams(found.params)) return true;
    }
    return false;
  };

  app.addHook('onRequest', function refuseSlashInParams(request, reply, done) {
    if (segmentParams(request.params)) return done();
    reply.callNotFound();
  });

  app.setNotFoundHandler((request, reply) => {
    const location = slashRedirect(request, isRoute);
    if (location) return redirect(reply, location);
    return reply.code(404).send({ detail: 'Not Found' });
  });
}

/** Whether every named parameter is one path segment; `*` (a wildcard: `/files/*`) takes any rest. */
function segmentParams(params: unknown): boolean {
  if (typeof params !== 'object' || params === null) return true;
  for (const name of Object.keys(params)) {
    const value = (params as Record<string, unknown>)[name];
    if (name !== '*' && (value === '' || String(value).includes('/'))) return false;
  }
  return true;
}

/** Where Starlette would redirect this request, or undefined when its other form is no route either. */
function slashRedirect(request: FastifyRequest, isRoute: (path: string) => boolean): string | undefined {
  const url = request.url;
  const queryAt = url.indexOf('?');
  const rawPath = queryAt === -1 ? url : url.slice(0, queryAt);
  const query = queryAt === -1 ? '' : url.slice(queryAt + 1);
  // Starlette works on the decoded path (a lenient-path rewrite made every escape decodable).
  let path: string;
  try {
    path = decodeURIComponent(rawPath);
  } catch {
    return undefined;
  }
  // A path that is a route for another method is Starlette's 405 (here the 404 as before), never
  // a redirect: the router looks at the other form only when no route has this path.
  if (path === '/' || isRoute(rawPath)) return undefined;
  const other = path.endsWith('/') ? path.replace(/\/+$/, '') : `${path}/`;
  if (other === '' || !isRoute(other.split('/').map(encodeURIComponent).join('/'))) return undefined;
  return pythonQuote(`${origin(request)}${other}${query ? `?${query}` : ''}`);
}

/** `scheme://host` as Starlette's URL(scope=...) writes it: the Host header, else the server's address. */
function origin(request: FastifyRequest): string {
  const scheme = request.protocol;
  const host = request.headers.host;
  if (host !== undefined) return `${scheme}://${host}`;
  const { localAddress, localPort } = request.socket;
  const defaultPort = scheme === 'https' ? 443 : 80;
  return localPort === defaultPort
    ? `${scheme}://${localAddress}`
    : `${scheme}://${localAddress}:${localPort}`;
}

/**
 * Python's `urllib.parse.quote(url, safe=":/%#?=@[]!$&'()*+,;")`, as Starlette's RedirectResponse
 * writes its Location: every other character but letters, digits and `_.-~` is percent-encoded
 * as UTF-8 (`%` itself is kept, so escapes in the query stay as sent).
 */
function pythonQuote(url: string): string {
  return url.replace(/[^A-Za-z0-9_.\-~:/%#?=@[\]!$&'()*+,;]/gu, (char) => encodeURIComponent(char));
}

function redirect(reply: FastifyReply, location: string): FastifyReply {
  return reply.code(307).header('location', location).send();
}
