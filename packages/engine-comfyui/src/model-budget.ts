import { readdir, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { JobModel } from '@imagegen/engines';
import type { ModelFolders } from './comfyui-settings.ts';
import { allModelDirs, formatBytes, MODEL_FOLDER_OF_TYPE, modelFilePath } from './model-store.ts';

/**
 * The disk budget of the models owners load (COMFYUI_MODELS_BUDGET): when their files in a
 * `models/` folder come to more than the budget, the least recently used of them are removed until
 * they fit. Only a file a load downloaded from its `model_url` can go (a marker beside it keeps the
 * URL), since it can come back: a job that names an evicted model fetches it again before it runs.
 * A trained LoRA has no URL to come back from and is never evicted; nor are the manifest's files
 * and the checkpoints COMFYUI_CHECKPOINTS maps, which are not owners' files at all. A file is
 * "used" when a job names it: its modification time is set then, so the order survives restarts
 * and is shared by every worker that mounts the folder.
 */

/** An owner's model file: its 32-hex-digit model id and an extension. */
const OWNER_FILE = /^[0-9a-f]{32}\.[a-z]+$/;

/** The marker of a file that came from a URL: `.<file>.url`, holding the URL. */
const urlMarker = (dir: string, file: string) => path.join(dir, `.${file}.url`);
/** What an evicted file leaves: `.<file>.evicted`, so a job naming it knows to fetch it again. */
const evictedMarker = (dir: string, file: string) => path.join(dir, `.${file}.evicted`);

export interface BudgetFigures {
  /** The owners' evictable model files, in bytes (the fullest folder's, where there are several). */
  readonly bytes: number;
  readonly budgetBytes: number;
  /** Files removed for the budget since this process started. */
  readonly evictions: number;
}

export class ModelBudget {
  private evictions = 0;
  private bytes = 0;
  /** Files (absolute paths) a job of this process uses now: never evicted under it. */
  private readonly inUse = new Map<string, number>();

  constructor(
    private readonly folders: ModelFolders,
    private readonly budgetBytes: number,
    /** `<folder>/<name>` of the files that are never evicted (the manifest's, the mapped checkpoints). */
    private readonly kept: ReadonlySet<string>,
    private readonly log: (line: string) => void,
  ) {}

  figures(): BudgetFigures {
    return { bytes: this.bytes, budgetBytes: this.budgetBytes, evictions: this.evictions };
  }

  /** Records where a loaded model came from: it may be evicted, and fetched again from there. */
  async remember(dir: string, model: JobModel): Promise<void> {
    if (!model.url) return;
    const { folder, file } = modelFilePath(model);
    await writeFile(urlMarker(path.join(dir, folder), file), model.url);
    await unlink(evictedMarker(path.join(dir, folder), file)).catch(() => {});
  }

  /** Whether the budget evicted this model's file from `dir` (a `models/` folder). */
  async evicted(dir: string, model: JobModel): Promise<boolean> {
    const { folder, file } = modelFilePath(model);
    return stat(evictedMarker(path.join(dir, folder), file)).then(
      () => true,
      () => false,
    );
  }

  /**
   * A job uses these models now: their files become the most recently used, and are kept until
   * the returned function is called.
   */
  async use(models: readonly JobModel[]): Promise<() => void> {
    const files: string[] = [];
    const now = new Date();
    for (const model of models) {
      const { folder, file } = modelFilePath(model);
      for (const dir of allModelDirs(this.folders)) {
        const full = path.join(dir, folder, file);
        files.push(full);
        this.inUse.set(full, (this.inUse.get(full) ?? 0) + 1);
        await utimes(full, now, now).catch(() => {});
      }
    }
    return () => {
      for (const full of files) {
        const left = (this.inUse.get(full) ?? 1) - 1;
        if (left > 0) this.inUse.set(full, left);
        else this.inUse.delete(full);
      }
    };
  }

  /** Removes the least recently used evictable files of each folder until they fit the budget. */
  async enforce(): Promise<void> {
    let fullest = 0;
    for (const dir of allModelDirs(this.folders)) {
      const files = await evictable(dir, this.kept);
      let total = files.reduce((sum, file) => sum + file.bytes, 0);
      files.sort((a, b) => a.usedAt - b.usedAt);
      for (const file of files) {
        if (total <= this.budgetBytes) break;
        if (this.inUse.has(file.path)) continue;
        const removed = await unlink(file.path).then(
          () => true,
          () => false,
        );
        await unlink(urlMarker(path.dirname(file.path), path.basename(file.path))).catch(() => {});
        if (!removed) continue;
        await writeFile(evictedMarker(path.dirname(file.path), path.basename(file.path)), '').catch(() => {});
        total -= file.bytes;
        this.evictions += 1;
        this.log(
          `COMFYUI_MODELS_BUDGET: removed ${path.relative(dir, file.path)} (${formatBytes(file.bytes)}, last used ${new Date(file.usedAt).toISOString()}); it is fetched again when a job names it`,
        );
      }
      fullest = Math.max(fullest, total);
    }
    this.bytes = fullest;
  }
}

/** The owners' files of a `models/` folder that came from a URL, with their size and last use. */
async function evictable(
  dir: string,
  kept: ReadonlySet<string>,
): Promise<{ path: string; bytes: number; usedAt: number }[]> {
  const found: { path: string; bytes: number; usedAt: number }[] = [];
  for (const folder of new Set(Object.values(MODEL_FOLDER_OF_TYPE))) {
    const names = await readdir(path.join(dir, folder)).catch(() => [] as string[]);
    const markers = new Set(names.filter((name) => name.startsWith('.') && name.endsWith('.url')));
    for (const name of names) {
      if (!OWNER_FILE.test(name) || kept.has(`${folder}/${name}`) || !markers.has(`.${name}.url`)) continue;
      const full = path.join(dir, folder, name);
      const info = await stat(full).catch(() => undefined);
      if (info) found.push({ path: full, bytes: info.size, usedAt: info.mtimeMs });
    }
  }
  return found;
}

/** COMFYUI_MODELS_BUDGET: bytes the owners' loaded models may take per `models/` folder; unset: no budget. */
export function parseModelsBudget(value: string | undefined): number | null {
  if (value === undefined || value.trim() === '') return null;
  const bytes = Number(value);
  if (!Number.isSafeInteger(bytes) || bytes <= 0) {
    throw new Error(`COMFYUI_MODELS_BUDGET=${value} is not a positive whole number of bytes`);
  }
  return bytes;
}
