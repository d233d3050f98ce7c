import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { SAMPLE_IMAGES, SAMPLE_IMAGES_PATH } from '@imagegen/contract';
import { FILES_PATH } from './blob-keys.ts';
import type { StoredBlob } from './blob-store.ts';

/**
 * The sample images of the contract (its sample-images.ts), shipped in ./sample-images and served
 * under `/files/samples/` beside the stored blobs, whatever the store: the playground's examples
 * use them as their inputs. The worker reads them here too (fetch/stored-files.ts), as it reads
 * every link of the API's own.
 */
const DIR = path.join(import.meta.dirname, 'sample-images');
const PREFIX = SAMPLE_IMAGES_PATH.slice(FILES_PATH.length);
const FILES: ReadonlySet<string> = new Set(Object.values(SAMPLE_IMAGES));
const loaded = new Map<string, Promise<StoredBlob>>();

/** The sample image at this blob key (`samples/<file>`), or undefined for any other key. */
export function sampleImage(key: string): Promise<StoredBlob> | undefined {
  if (!key.startsWith(PREFIX)) return undefined;
  const file = key.slice(PREFIX.length);
  if (!FILES.has(file)) return undefined;
  let blob = loaded.get(file);
  if (!blob) {
    const contentType = file.endsWith('.png') ? 'image/png' : 'image/jpeg';
    blob = readFile(path.join(DIR, file)).then((data) => ({ data, contentType }));
    loaded.set(file, blob);
  }
  return blob;
}
