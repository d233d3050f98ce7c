import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as Tf from '@tensorflow/tfjs';
import { tfjsWasmDir } from './model-files.ts';

/**
 * One tfjs per worker thread, on the WASM backend (tfjs-node cannot install here: it downloads
 * libtensorflow). Models load from the files npm installed, through a `file://` router, the
 * piece tfjs-node would otherwise provide. tfjs is imported on first use: it adds about 80 MB to
 * a thread, and a thread that only runs ISNet (onnxruntime) never needs it.
 */

let ready: Promise<typeof Tf> | undefined;
let loaded: typeof Tf | undefined;

export function tfjs(): Promise<typeof Tf> {
  ready ??= (async () => {
    const tf = await import('@tensorflow/tfjs');
    const { setWasmPaths } = await import('@tensorflow/tfjs-backend-wasm');
    setWasmPaths(`${tfjsWasmDir()}${path.sep}`);
    tf.io.registerLoadRouter((url) => {
      const target = Array.isArray(url) ? url[0] : url;
      // A router answers null for URLs it does not handle (tfjs's own typing says otherwise).
      return (
        typeof target === 'string' && target.startsWith('file://') ? fileModel(target) : null
      ) as Tf.io.IOHandler;
    });
    await tf.setBackend('wasm');
    await tf.ready();
    loaded = tf;
    return tf;
  })();
  return ready;
}

/**
 * The bytes of this thread's tfjs WASM memory (0 before tfjs loads). A WASM memory grows to the
 * largest work it has done (an ESRGAN patch of 256 pixels at x4 takes it near a gigabyte) and
 * never shrinks: only stopping the thread gives it back (inference-pool.ts does, soon after such
 * work).
 */
export function tfjsHeapBytes(): number {
  const backend = loaded?.backend() as { wasm?: { HEAPU8?: Uint8Array } } | undefined;
  return backend?.wasm?.HEAPU8?.byteLength ?? 0;
}

function fileModel(url: string): Tf.io.IOHandler {
  return {
    async load() {
      const file = fileURLToPath(url);
      const json = JSON.parse(await readFile(file, 'utf8')) as Tf.io.ModelJSON;
      const specs: Tf.io.WeightsManifestEntry[] = [];
      const shards: Buffer[] = [];
      for (const group of json.weightsManifest ?? []) {
        for (const shard of group.paths) shards.push(await readFile(path.join(path.dirname(file), shard)));
        specs.push(...group.weights);
      }
      const weights = Buffer.concat(shards);
      return {
        modelTopology: json.modelTopology,
        format: json.format,
        generatedBy: json.generatedBy,
        convertedBy: json.convertedBy,
        weightSpecs: specs,
        weightData: weights.buffer.slice(weights.byteOffset, weights.byteOffset + weights.byteLength),
        ...(json.signature ? { signature: json.signature } : {}),
        ...(json.userDefinedMetadata ? { userDefinedMetadata: json.userDefinedMetadata } : {}),
      };
    },
  };
}
