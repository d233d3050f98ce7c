/**
 * The API and its worker on an S3 bucket (s3rver on loopback): uploads, inputs read back by the
 * worker, and outputs, all through the bucket; `/files/<key>` proxies the bytes or redirects to a
 * fresh presigned URL, as FILES_VIA says.
 */
import { endpointByPath } from '@imagegen/contract';
import { sandboxEngineModule } from '@imagegen/engine-sandbox';
import { setUpEngines } from '@imagegen/engines';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOwner } from '../../src/auth/accounts.ts';
import { blobKeyOfUrl } from '../../src/storage/blob-keys.ts';
import { type LoopbackApi, startLoopbackApi } from '../support/loopback.ts';
import { type S3Server, startS3Server } from '../support/s3-server.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';

let db: TestDatabase;
let s3: S3Server;
let proxied: LoopbackApi;
let presigned: LoopbackApi;
let key: string;

beforeAll(async () => {
  db = await createTestDatabase();
  s3 = await startS3Server();
  key = (await createOwner(db.pool, { name: 's3', plan: 'UNLIMITED' })).apiKey;
  const { registry } = await setUpEngines([sandboxEngineModule], { IMAGEGEN_ENGINES: 'sandbox' });
  proxied = await startLoopbackApi({ pool: db.pool, engines: registry, store: s3.store() });
  presigned = await startLoopbackApi({
    pool: db.pool,
    engines: registry,
    store: s3.store({ presignSeconds: 120 }),
    withWorker: false,
  });
});

afterAll(async () => {
  await presigned?.close();
  await proxied?.close();
  await s3?.close();
  await db?.drop();
});

/** Submits the contract's example of `path` with `fields`, and answers its download URLs once it succeeds. */
async function generate(api: LoopbackApi, path: string, fields: Record<string, unknown>): Promise<string[]> {
  const headers = { 'API-Key': key, 'content-type': 'application/json' };
  const body = { ...(endpointByPath(path)!.example as object), samples: 1, ...fields };
  const submitted = await fetch(`${api.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  expect(submitted.status, await submitted.clone().text()).toBe(200);
  const { id } = (await submitted.json()) as { id: string };
  // A bound for a hang, not a speed: a sandbox task takes a second or so, much longer on a busy machine.
  for (const until = Date.now() + 60_000; Date.now() < until; ) {
    const status = (await (await fetch(`${api.url}${path}/status/${id}`, { headers })).json()) as {
      status: string;
      download_urls: string[];
    };
    if (status.status === 'SUCCESS') return status.download_urls;
    expect(status.status).toBe('PENDING');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`task ${id} did not finish`);
}

describe('files in an S3 bucket', () => {
  it('stores an upload in the bucket, serves it through the API, and the worker reads it back as an input', async () => {
    const png = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#48c' } })
      .png()
      .toBuffer();
    const form = new FormData();
    form.append('image_files', new Blob([png], { type: 'image/png' }), 'a.png');
    const uploaded = await fetch(`${proxied.url}/upload_images/v1`, {
      method: 'POST',
      headers: { 'API-Key': key },
      body: form,
    });
    expect(uploaded.status).toBe(200);
    const [link] = ((await uploaded.json()) as { image_urls: string[] }).image_urls;
    const stored = await s3.store().get(blobKeyOfUrl(link!, proxied.url)!);
    expect(stored?.data.equals(png)).toBe(true);
    const served = await fetch(link!);
    expect(served.status).toBe(200);
    expect(Buffer.from(await served.arrayBuffer()).equals(png)).toBe(true);

    const outputs = await generate(proxied, '/sd/image2image/v1', { init_image: link });
    const output = await fetch(outputs[0]!);
    expect(output.status).toBe(200);
    expect(output.headers.get('content-type')).toBe('image/png');
    const bytes = Buffer.from(await output.arrayBuffer());
    expect((await s3.store().get(blobKeyOfUrl(outputs[0]!, proxied.url)!))?.data.equals(bytes)).toBe(true);
  });

  it('with presigned URLs, /files/<key> redirects to a fresh URL of the bucket that serves the output', async () => {
    // The presigning API has no worker: the proxied one's worker runs the task, as another process would.
    const outputs = await generate(presigned, '/sd/text2image/v1', {});
    const link = outputs[0]!;
    expect(link.startsWith(`${presigned.url}/files/`)).toBe(true);
    const first = await fetch(link, { redirect: 'manual' });
    expect(first.status).toBe(302);
    expect(first.headers.get('cache-control')).toBe('no-store');
    const location = first.headers.get('location')!;
    expect(location).toContain(`${s3.endpoint}/${s3.bucket}/`);
    expect(location).toContain('X-Amz-Expires=120');
    const image = await fetch(location);
    expect(image.status).toBe(200);
    const stored = await s3.store().get(blobKeyOfUrl(link, presigned.url)!);
    expect(Buffer.from(await image.arrayBuffer()).equals(stored!.data)).toBe(true);
    // Following the redirect, as a browser does, gives the image too.
    expect((await fetch(link)).headers.get('content-type')).toBe('image/png');
  });

  it('answers 404, uncached, for a key with no blob in either mode', async () => {
    for (const api of [proxied, presigned]) {
      const missing = await fetch(`${api.url}/files/abcdefghijklmnopqrstuv/0.png`, { redirect: 'manual' });
      expect(missing.status).toBe(404);
      expect(missing.headers.get('cache-control')).toBe('no-store');
      expect(await missing.json()).toEqual({ detail: 'File not found' });
    }
  });
});
