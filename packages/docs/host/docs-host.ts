import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { type RuntimeSettings, runtimeSettingsScript } from '../runtime-settings.ts';

/**
 * A request handler mounted in front of the static files (the search service adds its routes this
 * way). It answers true when it handled the request.
 */
export type DocsHostHandler = (req: IncomingMessage, res: ServerResponse) => boolean | Promise<boolean>;

export interface DocsHostOptions {
  /** 0 picks a free port. */
  port: number;
  /** The Docusaurus build folder (packages/docs/build). */
  buildDir: string;
  host?: string;
  handlers?: DocsHostHandler[];
  /**
   * Written into every page served (see runtime-settings.ts), so that pages use this run's API
   * address and search settings; without them pages keep the values of their build.
   */
  runtimeSettings?: RuntimeSettings;
}

export interface DocsHost {
  url: string;
  close(): Promise<void>;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.xml': 'application/xml; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.map': 'application/json; charset=utf-8',
};

const COMPRESSIBLE = new Set(['.html', '.js', '.css', '.json', '.svg', '.xml', '.txt', '.map']);

/**
 * Serves the built documentation site: each route's `index.html`, hashed assets cached for a year,
 * the not-found page with HTTP 404, and a redirect that strips a trailing `index.html` or `.html`.
 * Text files are gzipped once and kept in memory: the build is a few MB. With `runtimeSettings`,
 * every HTML page carries them.
 */
export async function startDocsHost(options: DocsHostOptions): Promise<DocsHost> {
  const root = path.resolve(options.buildDir);
  const settingsScript = options.runtimeSettings ? runtimeSettingsScript(options.runtimeSettings) : undefined;
  const withSettings = (html: Buffer): Buffer =>
    settingsScript ? insertBeforeHeadEnd(html, settingsScript) : html;
  const notFound = withSettings(
    await readFile(path.join(root, '404.html')).catch(() => {
      throw new Error(`${root} holds no built site (404.html missing): run npm run build:docs first`);
    }),
  );
  const gzipped = new Map<string, Buffer>();
  /** Only HTML differs from the file, and only with runtime settings. */
  const rewritten = (ext: string) => settingsScript !== undefined && ext === '.html';
  const contentOf = async (file: string, ext: string): Promise<Buffer> =>
    rewritten(ext) ? withSettings(await readFile(file)) : readFile(file);

  async function fileAt(relative: string): Promise<string | undefined> {
    const full = path.join(root, relative);
    if (full !== root && !full.startsWith(root + path.sep)) return undefined;
    const info = await stat(full).catch(() => undefined);
    if (info?.isFile()) return full;
    if (info?.isDirectory()) {
      const index = path.join(full, 'index.html');
      if ((await stat(index).catch(() => undefined))?.isFile()) return index;
    }
    return undefined;
  }

  async function send(req: IncomingMessage, res: ServerResponse, file: string, status: number) {
    const ext = path.extname(file).toLowerCase();
    const immutable = file.startsWith(path.join(root, 'assets') + path.sep);
    res.setHeader('Content-Type', TYPES[ext] ?? 'application/octet-stream');
    res.setHeader('Cache-Control', immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    const wantsGzip = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
    if (COMPRESSIBLE.has(ext)) {
      res.setHeader('Vary', 'Accept-Encoding');
      if (wantsGzip) {
        let body = gzipped.get(file);
        if (!body) {
          body = gzipSync(await contentOf(file, ext));
          gzipped.set(file, body);
        }
        res.writeHead(status, { 'Content-Encoding': 'gzip', 'Content-Length': body.length });
        res.end(req.method === 'HEAD' ? undefined : body);
        return;
      }
    }
    if (rewritten(ext)) {
      const body = await contentOf(file, ext);
      res.writeHead(status, { 'Content-Length': body.length });
      res.end(req.method === 'HEAD' ? undefined : body);
      return;
    }
    const { size } = await stat(file);
    res.writeHead(status, { 'Content-Length': size });
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    createReadStream(file).pipe(res);
  }

  function sendNotFound(req: IncomingMessage, res: ServerResponse) {
    res.writeHead(404, {
      'Content-Type': TYPES['.html']!,
      'Content-Length': notFound.length,
      'Cache-Control': 'no-cache',
    });
    res.end(req.method === 'HEAD' ? undefined : notFound);
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    for (const handler of options.handlers ?? []) {
      if (await handler(req, res)) return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain; charset=utf-8' });
      res.end('Method Not Allowed');
      return;
    }
    const url = new URL(req.url ?? '/', 'http://docs.invalid');
    let pathname: string;
    try {
      pathname = decodeURIComponent(url.pathname);
    } catch {
      sendNotFound(req, res);
      return;
    }
    if (pathname.includes('\0')) {
      sendNotFound(req, res);
      return;
    }
    const stripped = pathname.replace(/\/index\.html$/, '/').replace(/\.html$/, '');
    if (stripped !== pathname && pathname !== '/404.html') {
      const target = stripped.length > 1 && stripped.endsWith('/') ? stripped.slice(0, -1) : stripped;
      res.writeHead(301, { Location: encodeURI(target || '/') + url.search });
      res.end();
      return;
    }
    const file = await fileAt(pathname);
    if (!file) {
      sendNotFound(req, res);
      return;
    }
    await send(req, res, file, 200);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      console.error('docs host:', error);
      if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end('Internal Server Error');
    });
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const shownHost = host === '0.0.0.0' || host === '::' ? 'localhost' : host;
  return {
    url: `http://${shownHost}:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/** The page with `tag` as the last element of its head; unchanged when it has no </head>. */
function insertBeforeHeadEnd(html: Buffer, tag: string): Buffer {
  const text = html.toString('utf8');
  const at = text.search(/<\/head>/i);
  if (at < 0) return html;
  return Buffer.from(text.slice(0, at) + tag + text.slice(at));
}
