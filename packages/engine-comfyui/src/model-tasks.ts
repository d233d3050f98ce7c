import { stat } from 'node:fs/promises';
import path from 'node:path';
import { Readable, type Writable } from 'node:stream';
import {
  EngineInputError,
  type EngineJob,
  type EngineResult,
  type JobModel,
  type ModelSource,
  type RunContext,
} from '@imagegen/engines';
import type { ModelFolders } from './comfyui-settings.ts';
import type { ComfyClient } from './contracts.ts';
import type { ModelBudget } from './model-budget.ts';
import type { ModelListings } from './model-listings.ts';
import {
  allModelDirs,
  copyModelFile,
  findModelFile,
  formatBytes,
  loadTargets,
  modelFilePath,
  removeModelFiles,
  serverModelsDir,
  type WriteOptions,
  type WrittenModel,
  writeModelFile,
} from './model-store.ts';

/**
 * The model tasks the comfyui engine serves when COMFYUI_MODELS_DIR is set: load_model downloads
 * `model_url` into the `models/` folders the servers read, sync_model copies a loaded model into an
 * enterprise server's own folder, and a training's LoRA, fetched from the server that trained it,
 * is stored where a load would put it. All write the one atomic way of model-store.ts. Before a
 * generation runs, the server it goes to must list every owner's model the request names.
 */

export const MODEL_TASK_PIPELINES = ['/load_model/v1', '/sync_model/v1'] as const;

export interface ModelFileOptions {
  /** COMFYUI_MODELS_DIR. */
  readonly folders: ModelFolders;
  /** MODEL_MAX_BYTES. */
  readonly maxBytes: number;
  /** The server's SSRF-safe fetcher, streaming. */
  readonly fetch: ModelSource;
  /** Opens a temporary file for writing (tests inject a full disk); default `fs.createWriteStream`. */
  readonly openWrite?: (file: string) => Writable;
  /** COMFYUI_MODELS_BUDGET: the owners' loaded models are kept within it. Absent: no budget. */
  readonly budget?: ModelBudget;
}

export function runModelTask(
  job: EngineJob,
  ctx: RunContext,
  options: ModelFileOptions,
): Promise<EngineResult> {
  // A sync names a model that is still loading, failed, or was deleted meanwhile.
  const model = theModel(job, 'model_id: the model is not loaded (still loading, or failed)');
  return job.pipeline === '/load_model/v1'
    ? loadModel(model, ctx, options)
    : syncModel(model, job.servers, ctx, options);
}

/** The one model of a model task's job (the worker hands exactly one); `missing` when none. */
function theModel(job: EngineJob, missing: string): JobModel {
  const models = Object.values(job.models ?? {});
  if (models.length === 0) throw new EngineInputError(missing);
  if (models.length > 1)
    throw new Error(`${job.pipeline}: the worker handed ${models.length} models, not one`);
  return models[0]!;
}

/** The model a training makes: the row its submission registered, which the worker hands over. */
export function trainedModel(job: EngineJob): JobModel {
  return theModel(job, `${job.pipeline}: the model this training registered is gone (deleted?)`);
}

async function loadModel(model: JobModel, ctx: RunContext, options: ModelFileOptions): Promise<EngineResult> {
  if (!model.url) {
    throw new EngineInputError(
      'model_url: the comfyui engine stores model files downloaded from model_url; pretrained_model_path is not fetched',
    );
  }
  const { written, meta } = await downloadModel(model, model.url, loadTargets(options.folders), ctx, options);
  return { images: [], model: written, meta };
}

/**
 * Downloads a model's file from its URL into these `models/` folders (streamed into the first,
 * copied into the others), remembers the URL beside it so the budget may evict it, and keeps the
 * budget with the new file spared.
 */
async function downloadModel(
  model: JobModel,
  url: string,
  targets: readonly string[],
  ctx: RunContext,
  options: ModelFileOptions,
): Promise<{ written: WrittenModel; meta: Record<string, unknown> }> {
  const { length, body } = await options.fetch(url, ctx.signal);
  const stored = await storeModel(model, body, length, ctx, options, targets, {
    maxBytes: options.maxBytes,
    ...(length ? { onBytes: (done: number) => ctx.progress(done / length, bytesDone(done, length)) } : {}),
  });
  await keepWithinBudget(model, targets, options);
  return stored;
}

/** Remembers where a loaded model came from in each folder, then evicts what the budget does not hold. */
async function keepWithinBudget(
  model: JobModel,
  dirs: readonly string[],
  options: ModelFileOptions,
): Promise<void> {
  const { budget } = options;
  if (!budget) return;
  for (const dir of dirs) await budget.remember(dir, model);
  const done = await budget.use([model]);
  try {
    await budget.enforce();
  } finally {
    done();
  }
}

/**
 * Stores the LoRA a training saved as the model it registered, where a load would put it, and
 * answers the training's result: the sample images its validation prompt drew, the file's marks.
 * The file comes from our own server, so no size cap applies.
 */
export async function storeTrainedModel(
  model: JobModel,
  file: Buffer,
  samples: EngineResult['images'],
  meta: Readonly<Record<string, unknown>>,
  ctx: RunContext,
  options: ModelFileOptions,
): Promise<EngineResult> {
  const stored = await storeModel(
    model,
    Readable.from(file),
    file.length,
    ctx,
    options,
    loadTargets(options.folders),
    {
      maxBytes: Number.MAX_SAFE_INTEGER,
    },
  );
  // Cancelled as it was written: the model fails, so its file goes too.
  if (ctx.signal.aborted) {
    await removeModelFiles(options.folders, model);
    throw ctx.signal.reason;
  }
  return { images: samples, model: stored.written, meta: { ...meta, ...stored.meta } };
}

/**
 * Writes a model's file into `models/` folders (those a load writes, model-store.ts loadTargets,
 * or a server's own): streamed into the first, copied into the others.
 */
async function storeModel(
  model: JobModel,
  source: AsyncIterable<Uint8Array> | NodeJS.ReadableStream,
  length: number | null,
  ctx: RunContext,
  options: ModelFileOptions,
  targets: readonly string[],
  write: Pick<WriteOptions, 'maxBytes' | 'onBytes'>,
): Promise<{ written: WrittenModel; meta: Record<string, unknown> }> {
  const { folder, file } = modelFilePath(model);
  const [first, ...rest] = targets;
  const written = await writeModelFile(path.join(first!, folder), file, source, {
    ...write,
    length,
    signal: ctx.signal,
    ...(options.openWrite ? { openWrite: options.openWrite } : {}),
  });
  for (const dir of rest)
    await copyTo(path.join(first!, folder, file), dir, folder, file, written.bytes, ctx, options);
  return { written, meta: { model_file: `${folder}/${file}`, sha256: written.sha256, bytes: written.bytes } };
}

/**
 * Copies the model into the folder of each server the task is routed to (its `server_id`), or
 * into the folders a load writes when it names none. A server reading the folder the file already
 * lies in needs no copy.
 */
async function syncModel(
  model: JobModel,
  servers: readonly string[] | undefined,
  ctx: RunContext,
  options: ModelFileOptions,
): Promise<EngineResult> {
  const { folder, file } = modelFilePath(model);
  const source = await findModelFile(allModelDirs(options.folders), folder, file);
  if (!source) {
    throw new EngineInputError(
      `model_id: model '${model.modelId}' has no file in COMFYUI_MODELS_DIR here; load it with model_url first`,
    );
  }
  const targets = servers
    ? servers.map((server) => {
        const dir = serverModelsDir(options.folders, server);
        if (dir === null) {
          throw new EngineInputError(
            `server_id: server '${server}' has no model folder (COMFYUI_MODELS_DIR names none for it, and no shared one)`,
          );
        }
        return dir;
      })
    : loadTargets(options.folders);
  const { size } = await stat(source);
  const copied: string[] = [];
  for (const dir of new Set(targets)) {
    if (path.join(dir, folder, file) === source) continue;
    await copyTo(source, dir, folder, file, size, ctx, options);
    copied.push(dir);
  }
  await keepWithinBudget(model, copied, options);
  return { images: [], meta: { model_file: `${folder}/${file}`, copied_to: copied.length } };
}

/** Copies a stored model file of `bytes` into another `models/` folder, the same atomic way. */
function copyTo(
  source: string,
  dir: string,
  folder: string,
  file: string,
  bytes: number,
  ctx: RunContext,
  options: ModelFileOptions,
): Promise<WrittenModel> {
  return copyModelFile(source, path.join(dir, folder), file, {
    maxBytes: Number.MAX_SAFE_INTEGER,
    length: bytes,
    signal: ctx.signal,
    ...(options.openWrite ? { openWrite: options.openWrite } : {}),
  });
}

function bytesDone(done: number, length: number): string {
  return `${formatBytes(done)} of ${formatBytes(length)}`;
}

/**
 * Fails the job unless the server lists every owner's model it names, in the folder of its type:
 * `model 'x' is not loaded on server gpu-1`. Not routed elsewhere: a load writes the folder every
 * server without one of its own reads (or every server's own), so only a server with a folder of
 * its own that the model was never synced to lacks it; the remedy is `/sync_model/v1`, which
 * running the job on another server would hide. A loaded model the disk budget evicted from the
 * server's folder is fetched again from its `model_url` first.
 */
export async function ensureModelsOn(
  client: ComfyClient,
  models: EngineJob['models'],
  listings: ModelListings,
  ctx: RunContext,
  files?: ModelFileOptions,
): Promise<void> {
  for (const model of Object.values(models ?? {})) {
    const { folder, file } = modelFilePath(model);
    if (await listings.has(client, folder, file, ctx.signal)) continue;
    // Only a file the budget evicted comes back by itself: one never synced to a server's own
    // folder stays the owner's to sync.
    const dir = files?.budget && model.url ? serverModelsDir(files.folders, client.name) : null;
    if (dir && (await files!.budget!.evicted(dir, model)) && !(await findModelFile([dir], folder, file))) {
      await downloadModel(model, model.url!, [dir], ctx, files!);
      if (await listings.has(client, folder, file, ctx.signal)) continue;
    }
    throw new EngineInputError(`model '${model.modelId}' is not loaded on server ${client.name}`);
  }
}
