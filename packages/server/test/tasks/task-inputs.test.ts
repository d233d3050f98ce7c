import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createEngineRegistry, type InputImage } from '@imagegen/engines';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createImageFetcher } from '../../src/fetch/image-fetcher.ts';
import { withStoredFiles } from '../../src/fetch/stored-files.ts';
import { allocateOutputKeys, downloadUrl } from '../../src/storage/blob-keys.ts';
import { LocalBlobStore } from '../../src/storage/local-blob-store.ts';
import {
  getTaskForOwner,
  startWorker,
  submitTask,
  type TaskRecord,
  type WorkerOptions,
} from '../../src/tasks/index.ts';
import { createOwner, eventually, fakeEngine, png } from '../support/fakes.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';

const PUBLIC_URL = 'http://api.test';
const PIPELINE = '/sd/controlnet/v1';

/**
 * A task's input images as the worker hands them to its engine: every link once, bounded per task
 * (TASK_MAX_INPUT_IMAGES, _BYTES, _PIXELS), kept on disk while the engine runs.
 */
describe("a task's input images", () => {
  let db: TestDatabase;
  let owner: string;
  let images: Server;
  let imagesUrl: string;
  let store: LocalBlobStore;
  const hits = new Map<string, number>();
  const running: { stop: AbortController; stopped: Promise<void> }[] = [];
  let photo: Buffer;

  beforeAll(async () => {
    db = await createTestDatabase();
    owner = await createOwner(db.pool);
    store = new LocalBlobStore(await mkdtemp(path.join(tmpdir(), 'imagegen-task-inputs-')));
    photo = (await png(120, 90, { r: 10, g: 120, b: 200 })).data;
    const other = (await png(60, 40)).data;
    images = createHttpServer((request, response) => {
      hits.set(request.url ?? '', (hits.get(request.url ?? '') ?? 0) + 1);
      const body = request.url === '/photo.png' ? photo : request.url === '/other.png' ? other : null;
      if (body) response.writeHead(200, { 'content-type': 'image/png' }).end(body);
      else response.writeHead(404).end();
    });
    await new Promise<void>((resolve) => images.listen(0, '127.0.0.1', resolve));
    imagesUrl = `http://127.0.0.1:${(images.address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    const all = running.splice(0);
    for (const r of all) r.stop.abort();
    await Promise.all(all.map((r) => r.stopped));
    hits.clear();
  });
  afterAll(async () => {
    await new Promise((resolve) => images.close(resolve));
    await db.drop();
    await rm(store.dir, { recursive: true, force: true });
  });

  /** A worker whose engine remembers the images each job was given, read while it ran. */
  function run(options: Partial<WorkerOptions> = {}) {
    const seen: { images: Record<string, InputImage | readonly InputImage[]>; bytes: number[] }[] = [];
    const engine = fakeEngine('fake', [PIPELINE], async (job) => {
      const all = Object.values(job.images).flat() as InputImage[];
      seen.push({
        images: job.images,
        bytes: await Promise.all(all.map(async (i) => (await i.read()).length)),
      });
      return { images: [await png(8, 8)] };
    });
    const stop = new AbortController();
    const worker = startWorker({
      pool: db.pool,
      engines: createEngineRegistry([engine], { enabled: ['fake'], pinned: {} }),
      fetcher: withStoredFiles(createImageFetcher({ allowPrivate: true }), store, PUBLIC_URL),
      store,
      publicUrl: PUBLIC_URL,
      signal: stop.signal,
      leaseMs: 2_000,
      pollMs: 200,
      retryBaseMs: 10,
      ...options,
    });
    running.push({ stop, stopped: worker.stopped });
    return seen;
  }

  const submit = (input: Record<string, unknown>) =>
    submitTask(db.pool, {
      ownerId: owner,
      endpoint: PIPELINE,
      kind: 'generation',
      input: { prompt: 'p', negative_prompt: '', ...input },
      publicUrl: PUBLIC_URL,
    });

  const settled = (id: string): Promise<TaskRecord> =>
    eventually(async () => {
      const task = await getTaskForOwner(db.pool, owner, id);
      return task && (task.state === 'succeeded' || task.state === 'failed') ? task : undefined;
    });

  it('fetches and checks the same link once, however many fields and places name it', async () => {
    const seen = run();
    const link = `${imagesUrl}/photo.png`;
    const { id } = await submit({
      init_images: [link, `${imagesUrl}/other.png`, link, link],
      ip_adapter_image: link,
    });
    expect((await settled(id)).state).toBe('succeeded');
    expect(hits.get('/photo.png')).toBe(1);
    expect(hits.get('/other.png')).toBe(1);
    const job = seen[0]!.images;
    const list = job.init_images as InputImage[];
    expect(list.map((image) => image.url)).toEqual([link, `${imagesUrl}/other.png`, link, link]);
    // One image, passed by reference wherever it is named.
    expect(list[2]).toBe(list[0]);
    expect(job.ip_adapter_image).toBe(list[0]);
    expect(seen[0]!.bytes).toEqual([
      photo.length,
      expect.any(Number),
      photo.length,
      photo.length,
      photo.length,
    ]);
  });

  it('reads an upload named sixty times once, holding its bytes in one file while the engine runs', async () => {
    const [key] = allocateOutputKeys(1, 'upload');
    await store.put(key!, photo, 'image/png');
    const link = downloadUrl(PUBLIC_URL, key!);
    const spoolsBefore = new Set(await spools());
    let during: string[] = [];
    let duringFiles: number[] = [];
    const engine = fakeEngine('fake', [PIPELINE], async (job) => {
      during = (await spools()).filter((dir) => !spoolsBefore.has(dir));
      duringFiles = await Promise.all(during.map(async (dir) => (await readdir(dir)).length));
      const list = job.images.init_images as InputImage[];
      expect(list.every((image) => image === list[0])).toBe(true);
      return { images: [await png(8, 8)] };
    });
    const stop = new AbortController();
    const worker = startWorker({
      pool: db.pool,
      engines: createEngineRegistry([engine], { enabled: ['fake'], pinned: {} }),
      fetcher: withStoredFiles(createImageFetcher(), store, PUBLIC_URL),
      store,
      publicUrl: PUBLIC_URL,
      signal: stop.signal,
      pollMs: 200,
    });
    running.push({ stop, stopped: worker.stopped });
    const { id } = await submit({ init_images: Array(60).fill(link) });
    expect((await settled(id)).state).toBe('succeeded');
    // This attempt's folder held the one file while the engine ran, and is gone since.
    expect(duringFiles).toContain(1);
    for (const dir of during) await expect(readdir(dir)).rejects.toThrow('ENOENT');
  });

  it('fails a task naming more images than a task may have, before fetching any', async () => {
    run({ inputLimits: { maxImages: 3, maxBytes: 1 << 30, maxPixels: 1e9 } });
    const { id } = await submit({ init_images: Array(4).fill(`${imagesUrl}/photo.png`) });
    const task = await settled(id);
    expect([task.state, task.error, task.attempts]).toEqual([
      'failed',
      'init_images: the request names 4 input images, more than the 3 a task may have (TASK_MAX_INPUT_IMAGES)',
      1,
    ]);
    expect(hits.size).toBe(0);
  });

  it('fails at once when the inputs come to more bytes than a task may have, naming the image and the setting', async () => {
    run({ inputLimits: { maxImages: 64, maxBytes: photo.length + 10, maxPixels: 1e9 } });
    const { id } = await submit({ init_images: [`${imagesUrl}/photo.png`, `${imagesUrl}/other.png`] });
    const task = await settled(id);
    expect(task.state).toBe('failed');
    expect(task.error).toMatch(
      /^init_images\[1\]: the task's input images come to \d+ bytes, above the \d+ bytes a task may have \(TASK_MAX_INPUT_BYTES\)$/,
    );
    expect(task.attempts).toBe(1);
  });

  it('fails at once when the inputs come to more pixels than a task may have', async () => {
    run({ inputLimits: { maxImages: 64, maxBytes: 1 << 30, maxPixels: 120 * 90 + 100 } });
    const { id } = await submit({ init_images: [`${imagesUrl}/photo.png`, `${imagesUrl}/other.png`] });
    const task = await settled(id);
    expect(task.error).toBe(
      "init_images[1]: the task's input images come to 13200 pixels, above the 10900 pixels a task may have (TASK_MAX_INPUT_PIXELS)",
    );
  });
});

/** The attempts' input folders that exist now (the system's temporary folder). */
async function spools(): Promise<string[]> {
  return (await readdir(tmpdir()))
    .filter((name) => name.startsWith('imagegen-inputs-'))
    .map((name) => path.join(tmpdir(), name));
}
