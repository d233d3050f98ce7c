import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { access, mkdir, readdir, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { Transform, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { EngineInputError, type JobModel } from '@imagegen/engines';
import { type ModelFolders, parseModelsDir, parseServerList } from './comfyui-settings.ts';

/**
 * The owners' model files in the ComfyUI `models/` folders (COMFYUI_MODELS_DIR): where each one
 * lies, and the one way a file gets there, streamed to a hidden temporary name in the same folder
 * and renamed into place, so ComfyUI never lists a half-written file.
 */

/**
 * The ComfyUI folder of each model type an owner's model may be: load_model's types (a trained
 * model is a LoRA), and an IP-Adapter, which `ip_adapter` names by its id.
 */
export const MODEL_FOLDER_OF_TYPE: Readonly<Record<string, string>> = {
  checkpoint: 'checkpoints',
  lora: 'loras',
  embedding: 'embeddings',
  adapter: 'ipadapter',
};

/** Where a model lies under a `models/` folder: `loras/<model_id>.safetensors`. */
export function modelFilePath(model: JobModel): { folder: string; file: string } {
  const folder = MODEL_FOLDER_OF_TYPE[model.modelType];
  if (!folder) throw new EngineInputError(`model_type: ${model.modelType} models have no ComfyUI folder`);
  return { folder, file: `${model.modelId}.${model.extension ?? 'safetensors'}` };
}

/** The `models/` folder a server reads: its own, else the shared one; null when it has neither. */
export function serverModelsDir(folders: ModelFolders, server: string): string | null {
  return folders.byServer[server] ?? folders.shared;
}

/**
 * The folders a load_model writes: the shared one, which every server without its own reads; with
 * no shared folder, every server's own, so a loaded model is usable on every server either way.
 */
export function loadTargets(folders: ModelFolders): string[] {
  return folders.shared !== null ? [folders.shared] : [...new Set(Object.values(folders.byServer))];
}

/** Every configured folder, the shared one first: where a model's file may lie. */
export function allModelDirs(folders: ModelFolders): string[] {
  return [
    ...new Set([...(folders.shared === null ? [] : [folders.shared]), ...Object.values(folders.byServer)]),
  ];
}

export interface WriteOptions {
  /** The largest file accepted (MODEL_MAX_BYTES): a larger one fails while streaming. */
  readonly maxBytes: number;
  /** Bytes promised (Content-Length, or the source file's size); null when unknown. */
  readonly length: number | null;
  readonly signal: AbortSignal;
  /** Called as bytes are written: done so far, of `length`. */
  onBytes?(done: number): void;
  /** Opens the temporary file (tests inject a full disk here); default `fs.createWriteStream`. */
  readonly openWrite?: (file: string) => Writable;
}

/** The file as written: its sha256 (hex) and size, computed on the way through. */
export interface WrittenModel {
  readonly sha256: string;
  readonly bytes: number;
}

/**
 * How long a temporary file stays untouched before it counts as a dead writer's (a worker killed
 * mid-download cannot remove its own; a live download writes to it all the time): for the file
 * being written now, two minutes, since the only other writer of a model id is an earlier attempt
 * of the same task, retried after its lease expired; for any other file, an hour, so a download
 * that merely stalls for a while is left alone.
 */
export const STALE_PART_MS = { sameFile: 2 * 60 * 1000, otherFile: 60 * 60 * 1000 } as const;

/** `.<file>.<uuid>.part`: hidden, and an extension ComfyUI's listings filter out. */
const PART_NAME = /^\.(.+)\.[0-9a-f-]{36}\.part$/;

/**
 * Streams `source` to `<dir>/<file>`: first to `.<file>.<uuid>.part` in the same folder, then
 * renamed, which replaces any earlier file of the name at once. Never holds the file in memory.
 * On any failure (cap, abort, a full disk, a broken source) the temporary file is removed and
 * nothing is left under the final name. What a killed writer left is swept first (sweepStaleParts).
 */
export async function writeModelFile(
  dir: string,
  file: string,
  source: AsyncIterable<Uint8Array> | NodeJS.ReadableStream,
  options: WriteOptions,
): Promise<WrittenModel> {
  const tooLarge = () =>
    new EngineInputError(
      `model_url: the file is larger than the MODEL_MAX_BYTES limit of ${formatBytes(options.maxBytes)}`,
    );
  if (options.length !== null && options.length > options.maxBytes) {
    // Refused unread: the connection goes now rather than hold a body no one will read.
    (source as { destroy?: () => void }).destroy?.();
    throw tooLarge();
  }
  await mkdir(dir, { recursive: true });
  await sweepStaleParts(dir, file, Date.now());
  const temporary = path.join(dir, `.${file}.${randomUUID()}.part`);
  const hash = createHash('sha256');
  let bytes = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      if (bytes > options.maxBytes) return done(tooLarge());
      hash.update(chunk);
      options.onBytes?.(bytes);
      done(null, chunk);
    },
  });
  const out = (options.openWrite ?? ((name: string) => createWriteStream(name, { flags: 'wx' })))(temporary);
  try {
    await pipeline(source, meter, out, { signal: options.signal });
    await rename(temporary, path.join(dir, file));
  } catch (error) {
    await unlink(temporary).catch(() => {});
    if (options.signal.aborted) throw options.signal.reason;
    if ((error as NodeJS.ErrnoException).code === 'ENOSPC') {
      throw new EngineInputError(
        `the model folder ${dir} is full (ENOSPC) after ${formatBytes(bytes)}; the partial file was removed`,
      );
    }
    throw error;
  }
  return { sha256: hash.digest('hex'), bytes };
}

/**
 * Removes the temporary files killed writers left in `dir` (STALE_PART_MS), answering their
 * names. Files that vanish meanwhile are fine: another worker swept them.
 */
export async function sweepStaleParts(dir: string, file: string, now: number): Promise<string[]> {
  const removed: string[] = [];
  for (const name of await readdir(dir)) {
    const target = PART_NAME.exec(name)?.[1];
    if (target === undefined) continue;
    const leftover = path.join(dir, name);
    const limit = target === file ? STALE_PART_MS.sameFile : STALE_PART_MS.otherFile;
    const untouched = await stat(leftover).then(
      (info) => now - info.mtimeMs,
      () => 0,
    );
    if (
      untouched > limit &&
      (await unlink(leftover).then(
        () => true,
        () => false,
      ))
    )
      removed.push(name);
  }
  return removed;
}

/** Copies a model file between `models/` folders, the same atomic way, with the same checks. */
export function copyModelFile(
  from: string,
  dir: string,
  file: string,
  options: Omit<WriteOptions, 'length'> & { length: number },
): Promise<WrittenModel> {
  return writeModelFile(dir, file, createReadStream(from), options);
}

/** The first folder of `dirs` holding `<folder>/<file>`, or null. */
export async function findModelFile(
  dirs: readonly string[],
  folder: string,
  file: string,
): Promise<string | null> {
  for (const dir of dirs) {
    const candidate = path.join(dir, folder, file);
    if (
      await access(candidate).then(
        () => true,
        () => false,
      )
    )
      return candidate;
  }
  return null;
}

export function formatBytes(bytes: number): string {
  for (const [unit, size] of [
    ['GiB', 1024 ** 3],
    ['MiB', 1024 ** 2],
    ['KiB', 1024],
  ] as const) {
    if (bytes >= size) return `${Number((bytes / size).toFixed(2))} ${unit}`;
  }
  return `${bytes} bytes`;
}

/** Removes a model's file from every configured folder (a missing one is fine): a deleted model. */
export async function removeModelFiles(folders: ModelFolders, model: JobModel): Promise<void> {
  const { folder, file } = modelFilePath(model);
  await Promise.all(
    allModelDirs(folders).map((dir) =>
      unlink(path.join(dir, folder, file)).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error;
      }),
    ),
  );
}

/**
 * What deleting a model removes on this process's view of COMFYUI_MODELS_DIR: its file in every
 * configured folder. Null when the setting is unset (no files are stored).
 */
export function modelFileRemoverFromEnv(
  env: Readonly<Record<string, string | undefined>>,
): ((model: JobModel) => Promise<void>) | null {
  const folders = parseModelsDir(env.COMFYUI_MODELS_DIR, parseServerList(env.COMFYUI_URLS));
  return folders ? (model) => removeModelFiles(folders, model) : null;
}
