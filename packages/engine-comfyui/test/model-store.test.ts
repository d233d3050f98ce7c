import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { EngineInputError } from '@imagegen/engines';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ComfyClient } from '../src/contracts.ts';
import { ModelListings } from '../src/model-listings.ts';
import { formatBytes, STALE_PART_MS, writeModelFile } from '../src/model-store.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'imagegen-model-store-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

/** A source that yields `chunks` and then waits until its reader goes away. */
async function* chunksThenStall(chunks: Buffer[], stall: Promise<void>) {
  for (const chunk of chunks) yield chunk;
  await stall;
}

describe('writeModelFile', () => {
  it('renames the file into place only once it is whole, with its sha256 and size', async () => {
    const data = Buffer.from('weights');
    const done: number[] = [];
    const written = await writeModelFile(path.join(dir, 'loras'), 'm.safetensors', Readable.from([data]), {
      maxBytes: 100,
      length: data.length,
      signal: new AbortController().signal,
      onBytes: (bytes) => done.push(bytes),
    });
    expect(written).toEqual({ sha256: createHash('sha256').update(data).digest('hex'), bytes: data.length });
    expect(done).toEqual([data.length]);
    expect(await readdir(path.join(dir, 'loras'))).toEqual(['m.safetensors']);
    expect(await readFile(path.join(dir, 'loras', 'm.safetensors'))).toEqual(data);
  });

  it('keeps the partial file hidden from ComfyUI while it streams, and removes it on abort', async () => {
    const controller = new AbortController();
    let release = () => {};
    const stall = new Promise<void>((resolve) => {
      release = resolve;
    });
    const writing = writeModelFile(
      path.join(dir, 'loras'),
      'm.safetensors',
      Readable.from(chunksThenStall([Buffer.alloc(10, 1)], stall)),
      {
        maxBytes: 100,
        length: 20,
        signal: controller.signal,
        onBytes: () => controller.abort(new Error('cancelled')),
      },
    );
    await expect(writing).rejects.toThrow('cancelled');
    release();
    expect(await readdir(path.join(dir, 'loras'))).toEqual([]);
  });

  it('refuses a declared size above the cap before writing, and a streamed one while writing', async () => {
    const options = { maxBytes: 8, signal: new AbortController().signal };
    const declared = writeModelFile(dir, 'a.safetensors', Readable.from([Buffer.alloc(4)]), {
      ...options,
      length: 9,
    });
    await expect(declared).rejects.toThrow(
      new EngineInputError('model_url: the file is larger than the MODEL_MAX_BYTES limit of 8 bytes'),
    );
    const streamed = writeModelFile(dir, 'b.safetensors', Readable.from([Buffer.alloc(6), Buffer.alloc(6)]), {
      ...options,
      length: null,
    });
    await expect(streamed).rejects.toThrow('larger than the MODEL_MAX_BYTES limit of 8 bytes');
    expect(await readdir(dir)).toEqual([]);
  });

  it("sweeps what killed writers left: its own file's old temporaries, and any other untouched for an hour", async () => {
    const part = (file: string, n: number) =>
      `.${file}.${String(n).padStart(8, '0')}-0000-4000-8000-000000000000.part`;
    const leftovers = {
      ownOld: part('m.safetensors', 1),
      ownFresh: part('m.safetensors', 2),
      otherOld: part('o.safetensors', 3),
      otherRecent: part('o.safetensors', 4),
    };
    const ago = (ms: number) => (Date.now() - ms) / 1000;
    const ages = {
      ownOld: STALE_PART_MS.sameFile + 5_000,
      ownFresh: 1_000,
      otherOld: STALE_PART_MS.otherFile + 5_000,
      otherRecent: STALE_PART_MS.sameFile + 5_000,
    };
    for (const [key, name] of Object.entries(leftovers)) {
      await writeFile(path.join(dir, name), 'partial');
      const when = ago(ages[key as keyof typeof ages]);
      await utimes(path.join(dir, name), when, when);
    }
    await writeFile(path.join(dir, 'kept.safetensors'), 'whole');
    await writeModelFile(dir, 'm.safetensors', Readable.from([Buffer.from('weights')]), {
      maxBytes: 100,
      length: 7,
      signal: new AbortController().signal,
    });
    expect((await readdir(dir)).sort()).toEqual(
      ['kept.safetensors', 'm.safetensors', leftovers.ownFresh, leftovers.otherRecent].sort(),
    );
  });

  it('names sizes in binary units', () => {
    expect(formatBytes(8 * 1024 ** 3)).toBe('8 GiB');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(12)).toBe('12 bytes');
  });
});

describe('ModelListings', () => {
  it('answers from a cached list, and asks again before saying a file is missing', async () => {
    const lists = [['a.safetensors'], ['a.safetensors', 'b.safetensors']];
    let asked = 0;
    const client = {
      name: 'gpu-1',
      url: 'http://gpu-1',
      models: async () => lists[Math.min(asked++, 1)]!,
    } as unknown as ComfyClient;
    const listings = new ModelListings(60_000);
    const signal = new AbortController().signal;
    expect(await listings.has(client, 'loras', 'a.safetensors', signal)).toBe(true);
    expect(await listings.has(client, 'loras', 'a.safetensors', signal)).toBe(true);
    expect(asked).toBe(1);
    // b arrived after the first list: the miss is looked up again.
    expect(await listings.has(client, 'loras', 'b.safetensors', signal)).toBe(true);
    expect(await listings.has(client, 'loras', 'c.safetensors', signal)).toBe(false);
    expect(asked).toBe(3);
  });
});
