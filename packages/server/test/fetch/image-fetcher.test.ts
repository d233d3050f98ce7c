import { readdir } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusalOf } from '../../src/fetch/address-policy.ts';
import {
  createImageFetcher,
  type ImageFetcherOptions,
  InputFetchError,
} from '../../src/fetch/image-fetcher.ts';
import { InputBudget } from '../../src/fetch/input-budget.ts';
import { InputSpool } from '../../src/fetch/input-spool.ts';
import type { Resolver } from '../../src/fetch/ssrf-guard.ts';
import { claimedSizePng, manyScansJpeg, noiseImage } from '../support/test-images.ts';
import { TEST_TLS_CERT, TEST_TLS_KEY } from '../support/test-tls.ts';

/**
 * Two loopback servers: 127.0.0.2 stands for "a public host" (admitted through `allowedRanges`,
 * with allowPrivate off), 127.0.0.1 stands for a private service that must never be reached.
 */
let png: Buffer;
let jpeg: Buffer;
let scans: Buffer;
let publicServer: http.Server;
let privateServer: http.Server;
let publicPort: number;
let privatePort: number;
let privateHits = 0;
let hugeBytesSent = 0;

const PUBLIC = '127.0.0.2';
const MB = 1024 * 1024;

/** Names that the tests' "DNS" knows; nothing else resolves. */
const names: Record<string, string[]> = {
  'images.example.test': [PUBLIC],
  'internal.example.test': ['192.168.1.20'],
  'rebind.example.test': [PUBLIC, '10.0.0.5'],
  'metadata.example.test': ['169.254.169.254'],
  'loopback.example.test': ['127.0.0.1'],
};
const resolve: Resolver = async (hostname) => {
  const addresses = names[hostname];
  if (!addresses) throw new Error(`ENOTFOUND ${hostname}`);
  return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};

function fetcher(options: ImageFetcherOptions = {}) {
  return createImageFetcher({ resolve, allowedRanges: [`${PUBLIC}/32`], ...options });
}

const at = (path: string) => `http://images.example.test:${publicPort}${path}`;

async function failure(promise: Promise<unknown>): Promise<InputFetchError> {
  const error = await promise.then(
    () => {
      throw new Error('expected the fetch to fail');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(InputFetchError);
  return error as InputFetchError;
}

beforeAll(async () => {
  png = await noiseImage(64, 48, 'png');
  jpeg = await noiseImage(40, 30, 'jpeg');
  scans = await manyScansJpeg(5_000);
  publicServer = http.createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://x');
    const send = (type: string, body: Buffer | string) => {
      response.writeHead(200, { 'content-type': type });
      response.end(body);
    };
    switch (url.pathname) {
      case '/photo.png':
        // The server lies about the type; the fetcher must sniff the bytes.
        return send('text/plain', png);
      case '/photo.jpg':
        return send('application/octet-stream', jpeg);
      case '/truncated.png':
        return send('image/png', png.subarray(0, Math.floor(png.length * 0.6)));
      case '/page.png':
        return send('image/png', '<!doctype html><title>not an image</title>');
      case '/bomb.png':
        return send('image/png', claimedSizePng(20_000, 20_000));
      case '/thin.png':
        return send('image/png', claimedSizePng(1, 49_999_999));
      case '/banner.png':
        return send('image/png', claimedSizePng(8_000, 100));
      case '/scans.jpg':
        return send('image/jpeg', scans);
      case '/declared-huge':
        response.writeHead(200, { 'content-type': 'image/png', 'content-length': String(30 * MB) });
        return response.write(png);
      case '/huge': {
        // An endless body, written as fast as the client reads it.
        response.writeHead(200, { 'content-type': 'image/png' });
        const block = Buffer.concat([png, Buffer.alloc(MB - png.length)]);
        const pump = () => {
          while (!response.destroyed && hugeBytesSent < 200 * MB) {
            hugeBytesSent += block.length;
            if (!response.write(block)) return response.once('drain', pump);
          }
        };
        return pump();
      }
      case '/stall':
        response.writeHead(200, { 'content-type': 'image/png' });
        return response.write(png.subarray(0, 20));
      case '/busy':
        response.writeHead(503).end('try later');
        return;
      case '/redirect':
        response.writeHead(302, { location: url.searchParams.get('to') ?? '/' });
        return response.end();
      case '/chain': {
        const left = Number(url.searchParams.get('left'));
        response.writeHead(301, { location: left > 0 ? `/chain?left=${left - 1}` : '/photo.png' });
        return response.end();
      }
      default:
        response.writeHead(404).end('missing');
    }
  });
  privateServer = http.createServer((_request, response) => {
    privateHits++;
    response.writeHead(200, { 'content-type': 'image/png' }).end(png);
  });
  await Promise.all([
    new Promise<void>((done) => publicServer.listen(0, PUBLIC, done)),
    new Promise<void>((done) => privateServer.listen(0, '127.0.0.1', done)),
  ]);
  publicPort = (publicServer.address() as AddressInfo).port;
  privatePort = (privateServer.address() as AddressInfo).port;
});

afterAll(async () => {
  publicServer.closeAllConnections();
  privateServer.closeAllConnections();
  await Promise.all([
    new Promise((done) => publicServer.close(done)),
    new Promise((done) => privateServer.close(done)),
  ]);
  expect(privateHits).toBe(0);
});

describe('the image fetcher', () => {
  it('fetches a real PNG, sniffing its type rather than trusting Content-Type', async () => {
    const image = await fetcher().fetchImage(at('/photo.png'), 'init_image');
    expect(image).toMatchObject({ contentType: 'image/png', width: 64, height: 48 });
    expect((await image.read()).equals(png)).toBe(true);
  });

  it('fetches a real JPEG', async () => {
    const image = await fetcher().fetchImage(at('/photo.jpg'), 'input_face');
    expect(image).toMatchObject({ contentType: 'image/jpeg', width: 40, height: 30 });
  });

  it('connects to the address it checked instead of resolving the name again', async () => {
    let calls = 0;
    const rebinding: Resolver = async () => {
      calls++;
      // First answer passes the check; any later answer would point inside the network.
      return [{ address: calls === 1 ? PUBLIC : '10.0.0.5', family: 4 }];
    };
    const image = await fetcher({ resolve: rebinding }).fetchImage(at('/photo.png'), 'init_image');
    expect(image.width).toBe(64);
    expect(calls).toBe(1);
  });

  it('follows up to five redirects', async () => {
    const image = await fetcher().fetchImage(at('/chain?left=4'), 'init_image');
    expect(image.width).toBe(64);
  });

  it('rejects more than five redirects', async () => {
    const error = await failure(fetcher().fetchImage(at('/chain?left=5'), 'init_image'));
    expect(error.message).toBe('init_image: too many redirects (more than 5)');
  });

  it('rejects a truncated PNG', async () => {
    const error = await failure(fetcher().fetchImage(at('/truncated.png'), 'init_image'));
    expect(error.message).toBe('init_image: the image data is truncated or corrupt');
    expect(error.transient).toBe(false);
  });

  it('rejects a body that is not an image whatever its Content-Type says', async () => {
    const error = await failure(fetcher().fetchImage(at('/page.png'), 'mask_image'));
    expect(error.message).toBe(
      'mask_image: content is not a PNG, JPEG, WebP or GIF image (it starts with "<!doctype html><")',
    );
  });

  it('stops reading an endless body at 20 MB while streaming', async () => {
    hugeBytesSent = 0;
    const error = await failure(fetcher().fetchImage(at('/huge'), 'init_image'));
    expect(error.message).toBe('init_image: body is larger than the 20 MB limit');
    // Far less than the 200 MB the server would send: the fetch stopped at the cap, plus what
    // the socket buffers held.
    expect(hugeBytesSent).toBeLessThan(60 * MB);
  });

  it('rejects a declared Content-Length above the cap before reading the body', async () => {
    const error = await failure(fetcher().fetchImage(at('/declared-huge'), 'init_image'));
    expect(error.message).toBe('init_image: body is larger than the 20 MB limit');
  });

  it('rejects a decompression bomb from its header, before decoding it', async () => {
    const started = Date.now();
    const error = await failure(fetcher().fetchImage(at('/bomb.png'), 'init_image'));
    expect(error.message).toBe('init_image: image is 20000×20000 (400 MP), above the 50 MP limit');
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('refuses a picture of one pixel by fifty million from its header: each side has a limit', async () => {
    const started = Date.now();
    const error = await failure(fetcher().fetchImage(at('/thin.png'), 'init_image'));
    expect(error.message).toBe('init_image: image is 1×49999999; each side may be at most 16384 pixels');
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('refuses a picture far longer than it is wide from its header', async () => {
    const error = await failure(fetcher().fetchImage(at('/banner.png'), 'init_image'));
    expect(error.message).toBe(
      'init_image: image is 8000×100; its long side may be at most 64 times its short side',
    );
  });

  it('refuses a JPEG of thousands of scans before decoding it', async () => {
    const error = await failure(fetcher().fetchImage(at('/scans.jpg'), 'init_image'));
    expect(error.message).toBe(
      'init_image: the JPEG has more than 100 scans, which no camera or encoder writes',
    );
  });

  it('charges the task’s allowance from the header, and refuses an image past it before decoding', async () => {
    const budget = new InputBudget({ maxImages: 64, maxBytes: 10 * MB, maxPixels: 64 * 48 + 100 });
    await fetcher().fetchImage(at('/photo.png'), 'init_images[0]', { budget });
    const error = await failure(fetcher().fetchImage(at('/photo.jpg'), 'init_images[1]', { budget }));
    expect(error.message).toBe(
      "init_images[1]: the task's input images come to 4272 pixels, above the 3172 pixels a task may have (TASK_MAX_INPUT_PIXELS)",
    );
  });

  it('keeps the bytes in the attempt’s folder, not in memory, and reads them back from there', async () => {
    const spool = await InputSpool.open();
    try {
      const image = await fetcher().fetchImage(at('/photo.png'), 'init_image', { spool });
      expect(image.size).toBe(png.length);
      expect(await readdir(spool.dir)).toHaveLength(1);
      expect((await image.read()).equals(png)).toBe(true);
    } finally {
      await spool.close();
    }
    await expect(readdir(spool.dir)).rejects.toThrow('ENOENT');
  });

  it('times out a server that stops sending', async () => {
    const error = await failure(fetcher({ totalTimeoutMs: 300 }).fetchImage(at('/stall'), 'init_image'));
    expect(error.message).toBe('init_image: timed out after 300 ms');
    expect(error.transient).toBe(true);
  });

  it('answers the HTTP status of a missing image', async () => {
    const error = await failure(fetcher().fetchImage(at('/nothing.png'), 'init_image'));
    expect(error.message).toBe('init_image: server answered HTTP 404');
    expect(error.transient).toBe(false);
  });

  it('marks a busy image host as worth retrying', async () => {
    const error = await failure(fetcher().fetchImage(at('/busy'), 'init_image'));
    expect(error.message).toBe('init_image: server answered HTTP 503');
    expect(error.transient).toBe(true);
  });

  it('passes the caller’s abort through instead of blaming the input', async () => {
    const controller = new AbortController();
    const pending = fetcher().fetchImage(at('/stall'), 'init_image', { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('lease lost')), 50);
    await expect(pending).rejects.toThrow('lease lost');
  });

  it.each([
    ['loopback', () => `http://127.0.0.1:${privatePort}/`, 'address 127.0.0.1 is not public (loopback)'],
    ['decimal IPv4', () => `http://2130706433:${privatePort}/`, 'address 127.0.0.1 is not public (loopback)'],
    ['hex IPv4', () => `http://0x7f000001:${privatePort}/`, 'address 127.0.0.1 is not public (loopback)'],
    ['octal IPv4', () => `http://0177.0.0.1:${privatePort}/`, 'address 127.0.0.1 is not public (loopback)'],
    ['short IPv4', () => `http://127.1:${privatePort}/`, 'address 127.0.0.1 is not public (loopback)'],
    ['IPv6 loopback', () => `http://[::1]:${privatePort}/`, 'address ::1 is not public (loopback)'],
    [
      'IPv4-mapped IPv6',
      () => `http://[::ffff:127.0.0.1]:${privatePort}/`,
      'address ::ffff:7f00:1 is not public (loopback)',
    ],
    [
      'IPv4-compatible IPv6',
      () => 'http://[::127.0.0.1]/',
      'address ::7f00:1 is not public (not global unicast)',
    ],
    ['NAT64 IPv6', () => 'http://[64:ff9b::a00:5]/', 'address 64:ff9b::a00:5 is not public (rfc6052)'],
    ['0.0.0.0', () => `http://0.0.0.0:${privatePort}/`, 'address 0.0.0.0 is not public (unspecified)'],
    ['::', () => `http://[::]:${privatePort}/`, 'address :: is not public (unspecified)'],
    [
      'cloud metadata',
      () => 'http://169.254.169.254/latest/meta-data/',
      'address 169.254.169.254 is not public (linkLocal)',
    ],
    ['IPv6 link-local', () => 'http://[fe80::1]/', 'address fe80::1 is not public (linkLocal)'],
    ['IPv6 unique local', () => 'http://[fd00::1]/', 'address fd00::1 is not public (uniqueLocal)'],
    ['private 10/8', () => 'http://10.0.0.5/', 'address 10.0.0.5 is not public (private)'],
    ['private 172.16/12', () => 'http://172.16.4.1/', 'address 172.16.4.1 is not public (private)'],
    ['private 192.168/16', () => 'http://192.168.0.1/', 'address 192.168.0.1 is not public (private)'],
    ['carrier-grade NAT', () => 'http://100.64.0.1/', 'address 100.64.0.1 is not public (carrierGradeNat)'],
    ['multicast', () => 'http://224.0.0.1/', 'address 224.0.0.1 is not public (multicast)'],
    ['broadcast', () => 'http://255.255.255.255/', 'address 255.255.255.255 is not public (broadcast)'],
    [
      'a name resolving to a private address',
      () => 'http://internal.example.test/a.png',
      'address 192.168.1.20 of internal.example.test is not public (private)',
    ],
    [
      'a name with one public and one private address',
      () => `http://rebind.example.test:${publicPort}/photo.png`,
      'address 10.0.0.5 of rebind.example.test is not public (private)',
    ],
    [
      'a name resolving to loopback',
      () => `http://loopback.example.test:${privatePort}/`,
      'address 127.0.0.1 of loopback.example.test is not public (loopback)',
    ],
    [
      'an unknown name',
      () => 'http://nowhere.example.test/',
      'host nowhere.example.test could not be resolved',
    ],
    ['a file URL', () => 'file:///etc/passwd', 'scheme file is not allowed (http and https only)'],
    [
      'an ftp URL',
      () => 'ftp://images.example.test/a.png',
      'scheme ftp is not allowed (http and https only)',
    ],
    ['a data URL', () => 'data:image/png;base64,AAAA', 'scheme data is not allowed (http and https only)'],
    [
      'credentials',
      () => `http://user:pw@images.example.test:${publicPort}/photo.png`,
      'URLs with credentials are not allowed',
    ],
    ['a malformed URL', () => 'http://exa mple.com/a.png', 'is not a valid URL'],
  ])('rejects %s', async (_name, url, reason) => {
    const error = await failure(fetcher().fetchImage(url(), 'init_image'));
    expect(error.message).toBe(`init_image: ${reason}`);
  });

  it.each([
    ['loopback', () => `http://127.0.0.1:${privatePort}/`, 'address 127.0.0.1 is not public (loopback)'],
    [
      'loopback by name',
      () => `http://loopback.example.test:${privatePort}/`,
      'address 127.0.0.1 of loopback.example.test is not public (loopback)',
    ],
    [
      'cloud metadata',
      () => 'http://169.254.169.254/latest/meta-data/',
      'address 169.254.169.254 is not public (linkLocal)',
    ],
    [
      'metadata by name',
      () => 'http://metadata.example.test/',
      'address 169.254.169.254 of metadata.example.test is not public (linkLocal)',
    ],
    ['hex private IPv4', () => 'http://0x0a000005/', 'address 10.0.0.5 is not public (private)'],
    [
      'IPv4-mapped private',
      () => 'http://[::ffff:10.0.0.1]/',
      'address ::ffff:a00:1 is not public (private)',
    ],
    ['a non-http scheme', () => 'file:///etc/passwd', 'scheme file is not allowed (http and https only)'],
  ])('rejects a redirect to %s', async (_name, target, reason) => {
    const url = at(`/redirect?to=${encodeURIComponent(target())}`);
    const error = await failure(fetcher().fetchImage(url, 'control_image'));
    const shown = target().startsWith('file:') ? JSON.stringify(target()) : new URL(target()).href;
    expect(error.message).toBe(`control_image: redirect to ${shown} refused: ${reason}`);
  });

  it('admits loopback with allowPrivate, and still refuses other private addresses', async () => {
    const local = createImageFetcher({ resolve, allowPrivate: true });
    const image = await local.fetchImage(`http://${PUBLIC}:${publicPort}/photo.png`, 'init_image');
    expect(image.width).toBe(64);
    const error = await failure(local.fetchImage('http://169.254.169.254/', 'init_image'));
    expect(error.message).toBe('init_image: address 169.254.169.254 is not public (linkLocal)');
  });
});

describe('the image fetcher over https', () => {
  let server: https.Server;
  let port: number;
  beforeAll(async () => {
    server = https.createServer({ key: TEST_TLS_KEY, cert: TEST_TLS_CERT }, (_request, response) => {
      response.writeHead(200, { 'content-type': 'image/png' }).end(png);
    });
    await new Promise<void>((done) => server.listen(0, PUBLIC, done));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
  });

  it('verifies the certificate against the host name while connecting to the checked address', async () => {
    const image = await fetcher({ ca: TEST_TLS_CERT }).fetchImage(
      `https://images.example.test:${port}/a.png`,
      'init_image',
    );
    expect(image.width).toBe(64);
  });

  it('refuses a certificate that does not name the host', async () => {
    const error = await failure(
      fetcher({ ca: TEST_TLS_CERT }).fetchImage(`https://${PUBLIC}:${port}/a.png`, 'init_image'),
    );
    expect(error.message).toBe('init_image: request failed: ERR_TLS_CERT_ALTNAME_INVALID');
  });

  it('refuses a certificate from an authority it does not trust', async () => {
    const error = await failure(
      fetcher().fetchImage(`https://images.example.test:${port}/a.png`, 'init_image'),
    );
    expect(error.message).toBe('init_image: request failed: DEPTH_ZERO_SELF_SIGNED_CERT');
  });
});

describe('the address policy', () => {
  it('admits public unicast addresses of both families', () => {
    expect(refusalOf('93.184.216.34')).toBeNull();
    expect(refusalOf('2606:2800:220:1:248:1893:25c8:1946')).toBeNull();
    expect(refusalOf('::ffff:93.184.216.34')).toBeNull();
  });

  it('refuses reserved and documentation ranges', () => {
    expect(refusalOf('192.0.2.1')).toBe('reserved');
    expect(refusalOf('240.0.0.1')).toBe('reserved');
    expect(refusalOf('2002:7f00:1::')).toBe('6to4');
  });
});
