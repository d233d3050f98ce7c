import { randomBytes } from 'node:crypto';
import type { Pool } from '@imagegen/db';
import type { Engine, EngineJob, InputImage, OutputImage, RunContext } from '@imagegen/engines';
import sharp from 'sharp';
import { createOwner as createAccount } from '../../src/auth/accounts.ts';
import type { Plan } from '../../src/auth/plans.ts';
import type { BlobStore, ImageFetcher } from '../../src/tasks/index.ts';

/** An owner with a subscription (and a key the queue tests do not use); answers the owner id. */
export async function createOwner(pool: Pool, plan: Plan = 'UNLIMITED'): Promise<string> {
  const created = await createAccount(pool, { name: `owner-${randomBytes(3).toString('hex')}`, plan });
  return created.owner.id;
}

export async function createServer(pool: Pool, id: string, ownerId: string | null): Promise<void> {
  await pool.query('INSERT INTO servers (id, owner_id) VALUES ($1, $2)', [id, ownerId]);
}

/** A real PNG of the given size and colour. */
export async function png(
  width: number,
  height: number,
  rgb = { r: 200, g: 40, b: 90 },
): Promise<OutputImage> {
  const data = await sharp({ create: { width, height, channels: 3, background: rgb } })
    .png()
    .toBuffer();
  return { data, contentType: 'image/png', width, height };
}

/** Stand-in for the blob store: keeps blobs in memory. */
export class FakeBlobStore implements BlobStore {
  readonly blobs = new Map<string, { data: Buffer; contentType: string }>();
  async put(key: string, data: Buffer, contentType: string): Promise<void> {
    this.blobs.set(key, { data, contentType });
  }
  async get(key: string) {
    return this.blobs.get(key) ?? null;
  }
  async delete(key: string): Promise<void> {
    this.blobs.delete(key);
  }
}

export class FakeInputFetchError extends Error {
  override readonly name = 'InputFetchError';
}

/** Stand-in for the image fetcher: serves the images registered for a URL, refuses the rest. */
export class FakeImageFetcher implements ImageFetcher {
  readonly images = new Map<string, InputImage>();
  readonly fetched: string[] = [];
  async fetchImage(url: string, field: string): Promise<InputImage> {
    this.fetched.push(url);
    const image = this.images.get(url);
    if (!image) throw new FakeInputFetchError(`${field}: ${url} answered 404`);
    return image;
  }
}

type RunFn = (
  job: EngineJob,
  ctx: RunContext,
) => Promise<{ images: OutputImage[]; meta?: Record<string, unknown> }>;

/** A test engine: draws `samples` PNGs of the requested size, or does what `run` says. */
export function fakeEngine(name: string, pipelines: string[], run?: RunFn): Engine & { jobs: EngineJob[] } {
  const jobs: EngineJob[] = [];
  return {
    name,
    pipelines,
    jobs,
    async run(job, ctx) {
      jobs.push(job);
      if (run) return run(job, ctx);
      const samples = typeof job.input.samples === 'number' ? job.input.samples : 1;
      const width = typeof job.input.width === 'number' ? job.input.width : 64;
      const height = typeof job.input.height === 'number' ? job.input.height : 64;
      const images = await Promise.all(Array.from({ length: samples }, () => png(width, height)));
      return { images, meta: { drawn_by: name } };
    },
  };
}

/**
 * Polls until `check` returns a value other than undefined, or fails after `ms`. The bound is for
 * a condition that never comes, not a speed to hold: generous, so that a busy machine (CI running
 * two files at once beside other jobs) never fails a test that is only slow.
 */
export async function eventually<T>(check: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
