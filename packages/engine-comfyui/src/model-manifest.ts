import { createHash } from 'node:crypto';
import { createReadStream, readFileSync } from 'node:fs';
import { readFile, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { EngineInputError, type ModelSource } from '@imagegen/engines';
import type { ModelFolders } from './comfyui-settings.ts';
import { copyModelFile, formatBytes, loadTargets, writeModelFile } from './model-store.ts';

/**
 * The operator's model manifest (COMFYUI_MODEL_MANIFEST): the files every server must have, fetched
 * into COMFYUI_MODELS_DIR before the worker takes work, so no first job waits on a download and no
 * server lacks a file the settings name. Each entry is a URL (fetched through the same SSRF-safe
 * fetcher and MODEL_MAX_BYTES cap as /load_model/v1) or a local path (copied), the folder and
 * name it goes under, and optionally its sha256, checked after the download. A file already there
 * is kept: with a sha256, once it was checked (a marker beside it remembers the size and time it
 * was checked at); without one, as it is. Files of the manifest are never evicted (model-budget.ts).
 */

export interface ManifestEntry {
  /** Where it comes from: exactly one of a URL and a local absolute path. */
  readonly url?: string;
  readonly path?: string;
  /** The `models/` folder it goes in (`checkpoints`, `loras`, `LLM/Florence-2-large`…). */
  readonly folder: string;
  /** Its file name there, the name graphs load it by. */
  readonly name: string;
  /** Its sha256, lowercase hex: a download that differs is removed and fails. */
  readonly sha256?: string;
}

/** A folder under `models/`: relative, no `..`, no hidden segment. */
const FOLDER = /^(?!.*(?:^|\/)\.)[A-Za-z0-9_][A-Za-z0-9_.+-]*(?:\/[A-Za-z0-9_][A-Za-z0-9_.+-]*)*$/;
/** A file name: no folder in it, not hidden (ComfyUI lists no hidden file). */
const FILE_NAME = /^[A-Za-z0-9_][A-Za-z0-9 _.+()-]*$/;
const SHA256 = /^[0-9a-f]{64}$/;

/** Reads and checks the manifest file (once, at start); throws naming the setting, the entry and what is wrong. */
export function readManifest(file: string): ManifestEntry[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new Error(`COMFYUI_MODEL_MANIFEST: cannot read ${file} (${(error as NodeJS.ErrnoException).code})`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new Error(`COMFYUI_MODEL_MANIFEST: ${file} is not JSON (${(error as Error).message})`);
  }
  return parseManifest(parsed, file);
}

export function parseManifest(value: unknown, file: string): ManifestEntry[] {
  const list = Array.isArray(value) ? value : (value as { models?: unknown } | null)?.models;
  if (!Array.isArray(list)) {
    throw new Error(`COMFYUI_MODEL_MANIFEST: ${file} holds no "models" list`);
  }
  const seen = new Set<string>();
  return list.map((item, n) => {
    const where = `COMFYUI_MODEL_MANIFEST: ${file}, models[${n}]`;
    if (typeof item !== 'object' || item === null || Array.isArray(item))
      throw new Error(`${where} is not an object`);
    const entry = item as Record<string, unknown>;
    for (const key of Object.keys(entry)) {
      if (!['url', 'path', 'folder', 'name', 'sha256'].includes(key))
        throw new Error(`${where}: unknown key "${key}"`);
    }
    const { url, path: source, folder, name, sha256 } = entry;
    if ((url === undefined) === (source === undefined))
      throw new Error(`${where}: give either "url" or "path"`);
    if (url !== undefined) {
      let parsedUrl: URL | undefined;
      try {
        parsedUrl = typeof url === 'string' ? new URL(url) : undefined;
      } catch {
        parsedUrl = undefined;
      }
      if (!parsedUrl || (parsedUrl.protocol !== 'http:' && parsedUrl.protocol !== 'https:')) {
        throw new Error(`${where}: "url" must be an http:// or https:// URL`);
      }
    }
    if (source !== undefined && (typeof source !== 'string' || !path.isAbsolute(source))) {
      throw new Error(`${where}: "path" must be an absolute path`);
    }
    if (typeof folder !== 'string' || !FOLDER.test(folder)) {
      throw new Error(`${where}: "folder" must be a folder under models/, such as "checkpoints"`);
    }
    if (typeof name !== 'string' || !FILE_NAME.test(name)) {
      throw new Error(`${where}: "name" must be a plain file name, such as "sd_xl_base_1.0.safetensors"`);
    }
    if (sha256 !== undefined && (typeof sha256 !== 'string' || !SHA256.test(sha256.toLowerCase()))) {
      throw new Error(`${where}: "sha256" must be 64 hexadecimal digits`);
    }
    const key = `${folder}/${name}`;
    if (seen.has(key)) throw new Error(`${where}: ${key} is listed twice`);
    seen.add(key);
    return {
      ...(typeof url === 'string' ? { url } : {}),
      ...(typeof source === 'string' ? { path: source } : {}),
      folder,
      name,
      ...(typeof sha256 === 'string' ? { sha256: sha256.toLowerCase() } : {}),
    };
  });
}

export interface ManifestOptions {
  readonly folders: ModelFolders;
  readonly maxBytes: number;
  readonly fetch: ModelSource;
  readonly signal: AbortSignal;
  /** Tells what it does now (readiness shows it). */
  readonly onStatus: (status: string) => void;
  readonly log: (line: string) => void;
  /** Tries per entry before it is given up on (default 3), and the wait after the first failure (doubling). */
  readonly tries?: number;
  readonly retryMs?: number;
}

/** What the manifest left: the files that are there, and those that could not be fetched, with why. */
export interface ManifestOutcome {
  readonly ready: readonly string[];
  readonly failed: readonly { readonly file: string; readonly error: string }[];
}

/**
 * Puts every manifest file into the folders a load writes (the shared one, or every server's own),
 * one after the other. An entry that keeps failing is given up on after its tries and reported;
 * the others still come, and the worker starts (a job that needs the missing file fails naming it).
 */
export async function fetchManifest(
  entries: readonly ManifestEntry[],
  options: ManifestOptions,
): Promise<ManifestOutcome> {
  const ready: string[] = [];
  const failed: { file: string; error: string }[] = [];
  const tries = options.tries ?? 3;
  for (const [n, entry] of entries.entries()) {
    const file = `${entry.folder}/${entry.name}`;
    const status = (detail?: string) =>
      options.onStatus(
        `fetching models (${n + 1} of ${entries.length}: ${file}${detail ? `, ${detail}` : ''})`,
      );
    status();
    for (let attempt = 1; ; attempt++) {
      try {
        await placeEntry(entry, options, status);
        ready.push(file);
        break;
      } catch (error) {
        if (options.signal.aborted) throw options.signal.reason;
        const message = (error as Error).message;
        // A refused address or a file over the cap is refused the same way every time.
        if (attempt >= tries || error instanceof EngineInputError) {
          options.log(
            `model manifest: ${file} not fetched after ${attempt} ${attempt === 1 ? 'try' : 'tries'}: ${message}`,
          );
          failed.push({ file, error: message });
          break;
        }
        const waitMs = (options.retryMs ?? 5_000) * 2 ** (attempt - 1);
        options.log(`model manifest: ${file} failed (${message}); trying again in ${waitMs / 1000} s`);
        await new Promise((resolve) => setTimeout(resolve, waitMs));
      }
    }
  }
  return { ready, failed };
}

async function placeEntry(
  entry: ManifestEntry,
  options: ManifestOptions,
  status: (detail?: string) => void,
): Promise<void> {
  const [first, ...rest] = loadTargets(options.folders).map((dir) => path.join(dir, entry.folder));
  if (!(await isPlaced(first!, entry))) {
    const onBytes = (length: number | null) => (done: number) =>
      status(length ? `${formatBytes(done)} of ${formatBytes(length)}` : formatBytes(done));
    let written: { sha256: string; bytes: number };
    if (entry.url) {
      const { length, body } = await options.fetch(entry.url, options.signal);
      written = await writeModelFile(first!, entry.name, body, {
        maxBytes: options.maxBytes,
        length,
        signal: options.signal,
        onBytes: onBytes(length),
      });
    } else {
      const { size } = await stat(entry.path!);
      written = await copyModelFile(entry.path!, first!, entry.name, {
        maxBytes: options.maxBytes,
        length: size,
        signal: options.signal,
        onBytes: onBytes(size),
      });
    }
    if (entry.sha256 && written.sha256 !== entry.sha256) {
      await unlink(path.join(first!, entry.name)).catch(() => {});
      throw new Error(
        `its sha256 is ${written.sha256}, not the manifest's ${entry.sha256}; the file was removed`,
      );
    }
    if (entry.sha256) await mark(first!, entry.name);
  }
  const source = path.join(first!, entry.name);
  for (const dir of rest) {
    if (await isPlaced(dir, entry)) continue;
    const { size } = await stat(source);
    await copyModelFile(source, dir, entry.name, {
      maxBytes: Number.MAX_SAFE_INTEGER,
      length: size,
      signal: options.signal,
    });
    if (entry.sha256) await mark(dir, entry.name);
  }
}

/** The checked file's marker: `.<name>.sha256-checked`, hidden from ComfyUI's listings. */
const markerOf = (dir: string, name: string) => path.join(dir, `.${name}.sha256-checked`);

/** Whether the file is in `dir` as the manifest wants it (checked once against its sha256). */
async function isPlaced(dir: string, entry: ManifestEntry): Promise<boolean> {
  const file = path.join(dir, entry.name);
  const info = await stat(file).catch(() => undefined);
  if (!info) return false;
  if (!entry.sha256) return true;
  const marker = await readFile(markerOf(dir, entry.name), 'utf8').catch(() => '');
  if (marker === stamp(info)) return true;
  if ((await sha256Of(file)) !== entry.sha256) return false;
  await mark(dir, entry.name);
  return true;
}

async function mark(dir: string, name: string): Promise<void> {
  await writeFile(markerOf(dir, name), stamp(await stat(path.join(dir, name))));
}

const stamp = (info: { size: number; mtimeMs: number }) => `${info.size} ${info.mtimeMs}`;

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
