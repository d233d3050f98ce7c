/**
 * The public web as the recorded requests reach it, on loopback: the examples' `https://` links
 * (input images, load_model's file) are served here, and the recordings write them back as the
 * links the examples show.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { drawPicture } from '@imagegen/comfyui-fake';
import type { Endpoint } from '@imagegen/contract';
import { FACE_CHECKED_FIELDS } from '@imagegen/engine-cpu/notes';
import { facePhoto } from '@imagegen/engine-cpu/test-images';
import sharp from 'sharp';

/** A scene or a mask as an input image: small, so the pipelines run in no time. */
const SCENE = { width: 96, height: 64 } as const;

/** A stand-in for the public web: `https://host/path` of an example is served at `<url>/host/path`. */
export interface StandIn {
  readonly url: string;
  /** Makes ready what the endpoint will fetch of `body`'s links: pictures, and load_model's file. */
  serve(endpoint: Endpoint, body: Record<string, unknown>): Promise<void>;
  /** `body` with its `https://` links pointing at the stand-in. */
  toLoopback(body: Record<string, unknown>): Record<string, unknown>;
  close(): Promise<void>;
}

export async function startStandIn(): Promise<StandIn> {
  const files = new Map<string, readonly [string, Buffer]>();
  const server = createServer((request, response) => {
    const file = files.get((request.url ?? '').split('?')[0]!);
    if (file)
      response.writeHead(200, { 'content-type': file[0], 'content-length': file[1].length }).end(file[1]);
    else response.writeHead(404).end('not here');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const local = (link: string) => `/${link.replace(/^https:\/\//, '')}`;
  return {
    url,
    async serve(endpoint, body) {
      const checked = new Set(FACE_CHECKED_FIELDS[endpoint.path] ?? []);
      for (const field of endpoint.imageFields) {
        for (const link of [body[field]].flat()) {
          if (typeof link !== 'string' || !link.startsWith('https://') || files.has(local(link))) continue;
          files.set(local(link), ['image/png', await pictureFor(link, checked.has(field))]);
        }
      }
      if (typeof body.model_url === 'string' && !files.has(local(body.model_url))) {
        // A model file as load_model downloads it: any bytes do, the fake ComfyUI lists it by name.
        const bytes = Buffer.from(Array.from({ length: 4096 }, (_, n) => (n * 7) % 256));
        files.set(local(body.model_url), ['application/octet-stream', bytes]);
      }
    },
    toLoopback(body) {
      return JSON.parse(JSON.stringify(body).replaceAll('"https://', `"${url}/`)) as Record<string, unknown>;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * A link's picture: a photograph of a face where the pipeline checks for one (the face preflight
 * runs for real), a mask for `*-mask`, else a small drawn landscape.
 */
function pictureFor(link: string, face: boolean): Promise<Buffer> {
  if (face) return facePhoto();
  if (/-mask\.\w+$/.test(link)) return drawPicture({ ...SCENE, kind: 'mask' });
  return scenery(SCENE.width, SCENE.height);
}

/**
 * Sky, hills and a lake, with nothing an object detector could half-see (a sun reads as a ball to
 * it): image2prompt's description of it is colours and shape alone, the same on every machine.
 */
function scenery(width: number, height: number): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
    <defs><linearGradient id="sky" x1="0" y1="0" x2="0" y2="1">
      <stop offset="0" stop-color="#4a90d9"/><stop offset="1" stop-color="#cfe6f7"/>
    </linearGradient></defs>
    <rect width="100%" height="100%" fill="url(#sky)"/>
    <path d="M0 ${height * 0.6} Q ${width * 0.25} ${height * 0.35} ${width * 0.5} ${height * 0.6} T ${width} ${height * 0.55} V ${height} H 0 Z" fill="#3f7d3a"/>
    <rect y="${height * 0.8}" width="100%" height="${height * 0.2}" fill="#2f6fa8"/>
  </svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}
