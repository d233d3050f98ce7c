import { randomUUID } from 'node:crypto';
import { endpointByPath } from '@imagegen/contract';
import {
  type Engine,
  EngineInputError,
  type EngineJob,
  type EngineResult,
  type InputImage,
  type OutputImage,
  type RunContext,
  type SubmissionRefusal,
} from '@imagegen/engines';
import sharp, { type Metadata } from 'sharp';
import type { CheckpointFamily } from './checkpoint-roles.ts';
import { modelKind } from './client/rejection.ts';
import {
  type ApiPrompt,
  type ComfyClient,
  type CompileContext,
  type CompiledWorkflow,
  type FileRef,
  type ImageSize,
  type PipelineCompiler,
  PromptFailedError,
  PromptLostError,
  type PromptOutputs,
  type PromptPreview,
  PromptRejectedError,
  PromptStalledError,
  type PromptTiming,
  ServerOutOfMemoryError,
  ServerUnavailableError,
} from './contracts.ts';
import { ModelListings } from './model-listings.ts';
import { fetchManifest, type ManifestEntry } from './model-manifest.ts';
import { modelFilePath } from './model-store.ts';
import {
  ensureModelsOn,
  MODEL_TASK_PIPELINES,
  type ModelFileOptions,
  runModelTask,
  storeTrainedModel,
  trainedModel,
} from './model-tasks.ts';
import { type NodePack, packOfClass } from './node-packs.ts';
import { type ProgressFollower, samplingProgress } from './sampling-progress.ts';
import { type GraphNeed, graphNeeds } from './server-capabilities.ts';
import { type PoolOptions, type ServerLease, ServerPool, SLOTS_PER_SERVER } from './server-pool.ts';
import { WARMUP_FAMILIES, type WarmupFamily, warmUp, warmupPrompt } from './warm-up.ts';

/**
 * The comfyui engine: real diffusion on one or many ComfyUI servers. A job is compiled into a
 * ComfyUI graph by its pipeline's compiler, sent to the server the pool picks (its routing
 * respected), followed to the end with progress, and answered with the server's output images.
 * A server that dies mid-run is marked down and the job runs again on another; a prompt that
 * stalls (no progress for COMFYUI_STALL_SECONDS) is interrupted, its server marked suspect, and the
 * job runs once more on another server; a server that restarted and forgot the prompt gets it once more; a graph the server refuses, or one that
 * fails while it runs, fails the task with the server's reason in plain words. A prompt that runs
 * out of memory frees the server's memory and runs once more, on another server when there is one.
 * A job goes only to a server that has every node class and model file its graph needs (as the
 * servers say, pool.ts). A training runs the same way; its result is the LoRA the graph saved,
 * stored as the owner's model.
 */
export interface ComfyuiEngineOptions {
  /** One client per server of COMFYUI_URLS (servers sharing a name form a group). */
  readonly servers: readonly ComfyClient[];
  /** The compilers this engine runs: its pipelines are theirs. */
  readonly compilers: readonly PipelineCompiler[];
  /** COMFYUI_CHECKPOINTS: the API's model ids (and `<id>:<role>`) to checkpoint files on the servers. */
  readonly checkpoints: Readonly<Record<string, string>>;
  /** COMFYUI_CHECKPOINTS' families of the operator's own model ids (`my-xl:sdxl=…`). Absent: none. */
  readonly families?: Readonly<Record<string, CheckpointFamily>>;
  readonly pool?: PoolOptions;
  /**
   * COMFYUI_MODELS_DIR and what storing model files needs: with it the engine also serves
   * load_model and sync_model (model-tasks.ts), and train_model, whose LoRA it stores there.
   * Absent: load and sync only register their rows, and another engine serves training.
   */
  readonly modelFiles?: ModelFileOptions;
  /**
   * COMFYUI_MODEL_MANIFEST: files fetched into COMFYUI_MODELS_DIR (`modelFiles`' folders) when the
   * engine starts, before it takes work. Absent: none.
   */
  readonly manifest?: readonly ManifestEntry[];
  /** COMFYUI_WARMUP: the families warmed up on each server when it first answers, and again when it comes back. */
  readonly warmup?: readonly WarmupFamily[];
  /** Where the engine's own lines go (the pool's log when absent). */
  readonly log?: (line: string) => void;
}

/**
 * Jobs per server the worker keeps in flight: the pool's slots (one prompt running, one queued)
 * plus one prepared and waiting, so a freed slot is refilled at once rather than after the
 * database hands out the next task.
 */
const JOBS_PER_SERVER = SLOTS_PER_SERVER + 1;

export function createComfyuiEngine(options: ComfyuiEngineOptions): Engine {
  const compilers = new Map(options.compilers.map((compiler) => [compiler.pipeline, compiler]));
  const log = options.log ?? options.pool?.log ?? (() => {});
  // What start() does now, for readiness; null once it is done.
  let startup: string | null = null;
  const closing = new AbortController();
  const warmups = warmupPrompts(options, compilers, log);
  // The warm-up running on each server, at most one each.
  const warming = new Map<ComfyClient, Promise<void>>();
  const warm = (client: ComfyClient) => {
    if (warmups.length === 0 || warming.has(client) || closing.signal.aborted) return;
    const running = warmUp(client, warmups, {
      signal: closing.signal,
      log,
      onStatus: (family) => {
        if (startup !== null) startup = `warming up ${client.name} (${family})`;
      },
    }).finally(() => warming.delete(client));
    warming.set(client, running);
  };
  const { modelFiles } = options;
  // A training stores its model in COMFYUI_MODELS_DIR: without it, another engine serves it.
  const served = [...compilers.keys()].filter((pipeline) => modelFiles || !trains(pipeline));
  const everyRequestNeeds = new Map(
    served.map((pipeline) => [pipeline, everyRequestClasses(compilers.get(pipeline)!)] as const),
  );
  const pool = new ServerPool(options.servers, {
    ...options.pool,
    onUp: warm,
    runnable: (capabilities) =>
      served.filter((pipeline) => everyRequestNeeds.get(pipeline)!.every((node) => capabilities.has(node))),
  });
  // Each server may fail once under a job before the attempt gives up (then the worker retries it).
  const tries = options.servers.length + 1;
  const listings = new ModelListings();
  return {
    name: 'comfyui',
    pipelines: [...served, ...(modelFiles ? MODEL_TASK_PIPELINES : [])],
    capacity: options.servers.length * JOBS_PER_SERVER,
    servers: () => pool.status(),
    startup: () => startup,
    figures: () => (modelFiles?.budget ? { models: modelFiles.budget.figures() } : {}),
    async start() {
      startup = 'starting';
      try {
        if (options.manifest?.length && modelFiles) {
          const outcome = await fetchManifest(options.manifest, {
            folders: modelFiles.folders,
            maxBytes: modelFiles.maxBytes,
            fetch: modelFiles.fetch,
            signal: closing.signal,
            onStatus: (status) => {
              startup = status;
            },
            log,
          });
          log(
            `model manifest: ${outcome.ready.length} of ${options.manifest.length} file(s) in place` +
              (outcome.failed.length ? `; not fetched: ${outcome.failed.map((f) => f.file).join(', ')}` : ''),
          );
        }
        startup = 'checking the servers';
        await modelFiles?.budget?.enforce();
        await pool.start();
        // The servers that answered are warming up (pool.ts calls onUp): the first job waits for none.
        await Promise.all(warming.values());
      } finally {
        startup = null;
      }
    },
    async close() {
      closing.abort(new Error('the comfyui engine is closing'));
      await pool.close();
    },

    // What the settings alone decide of a request (a model of a family its adapters do not fit),
    // asked by the API before it queues the task; compile refuses the same when a task gets here.
    admit(pipeline, input) {
      const compiler = compilers.get(pipeline);
      if (!compiler) return null;
      const settings = {
        checkpoints: options.checkpoints,
        ...(options.families ? { families: options.families } : {}),
      };
      return compiler.admit?.({ input, ...settings }) ?? capabilityRefusal(pool, compiler, input, settings);
    },

    async run(job: EngineJob, ctx: RunContext): Promise<EngineResult> {
      if (modelFiles && (MODEL_TASK_PIPELINES as readonly string[]).includes(job.pipeline)) {
        const result = await runModelTask(job, ctx, modelFiles);
        // The servers list the new file now: what they can run is read again.
        await pool.refreshCapabilities();
        return result;
      }
      const compiler = compilers.get(job.pipeline);
      if (!compiler || (trains(job.pipeline) && !modelFiles))
        throw new Error(`the comfyui engine has no compiler for ${job.pipeline}`);
      // A training names the model it makes, not models it uses: its file is written at the end.
      const trained = trains(job.pipeline) ? trainedModel(job) : undefined;
      const uses = trained ? undefined : job.models;
      // Unique per task: ComfyUI serves an identical graph from its cache, pointing at the files of
      // whichever task ran it first; a prefix of our own keeps every task's graph and files apart.
      const key = randomUUID();
      const task = {
        job,
        uses,
        compiler,
        key,
        checkpoints: options.checkpoints,
        ...(options.families ? { families: options.families } : {}),
      };
      // Compiled once before a server is taken: bad input fails at once, and the checkpoint the
      // graph loads steers the choice of server. It is compiled again for each submission, with
      // the names the server gave the uploads.
      const compiled = compile(task, requestedNames(task));
      const { checkpoint } = compiled;
      // One bar for the whole task, so a run again elsewhere never moves it back.
      const progress = samplingProgress(compiled, (fraction, message) => ctx.progress(fraction, message));
      // What the graph needs of a server (the owner's model files aside: checked on the server it gets).
      const ownFiles = new Set(Object.values(uses ?? {}).map((model) => modelFilePath(model).file));
      const needs = graphNeeds(compiled.prompt, pool.reference?.objectInfo, (value) => ownFiles.has(value));
      // The server a prompt of this job stalled on: the job runs once more, elsewhere.
      let stalledOn: ComfyClient | undefined;
      // The first out-of-memory of this job, and where: it runs once more, elsewhere when it can.
      let outOfMemory: { on: ComfyClient; error: Error } | undefined;
      for (let attempt = 1; ; attempt++) {
        const avoid = stalledOn ?? outOfMemory?.on;
        const lease = await pool.acquire({
          ...(checkpoint ? { checkpoint } : {}),
          ...(job.servers ? { servers: job.servers } : {}),
          ...(avoid && pool.hasOther(avoid, job.servers) ? { avoid } : {}),
          needs,
          signal: ctx.signal,
        });
        // The owner's models it loads are the most recently used, and kept while it runs.
        const releaseModels = await modelFiles?.budget?.use(Object.values(uses ?? {}));
        try {
          // A model the budget evicted is fetched again here; its progress is not the task's.
          await ensureModelsOn(
            lease.client,
            uses,
            listings,
            { signal: ctx.signal, progress: () => {} },
            modelFiles,
          );
          const ran = await runOn(lease, {
            ...task,
            signal: ctx.signal,
            progress,
            ...(ctx.preview ? { preview: (image: PromptPreview) => ctx.preview?.(image) } : {}),
          });
          const meta = {
            comfyui_server: lease.client.name,
            ...(checkpoint ? { checkpoint } : {}),
            ...timingMeta(ran),
            ...(outOfMemory ? { comfyui_out_of_memory_on: outOfMemory.on.name } : {}),
          };
          if (trained) {
            if (!ran.model) throw new Error(`the training graph of ${job.pipeline} saved no model file`);
            return await storeTrainedModel(trained, ran.model, ran.images, meta, ctx, modelFiles!);
          }
          return {
            images: ran.images,
            ...(ran.texts.length > 0 ? { text: ran.texts.join('\n') } : {}),
            meta,
            ...(compiled.notes ? { notes: compiled.notes } : {}),
          };
        } catch (error) {
          if (error instanceof ServerOutOfMemoryError && !ctx.signal.aborted) {
            lease.outOfMemory(error);
            // ComfyUI unloads its models after an out-of-memory, but what it still holds (its cache,
            // the allocator's reserve) is what the next prompt would run out of: free it all.
            await lease.client.free(AbortSignal.timeout(FREE_TIMEOUT_MS)).catch((failure: Error) => {
              log(`ComfyUI server ${lease.client.name}: POST /free failed: ${failure.message}`);
            });
            if (!outOfMemory) {
              outOfMemory = { on: lease.client, error };
              continue;
            }
            throw new EngineInputError(
              `${outOfMemory.error.message}; run once more after freeing memory: ${error.message}`,
            );
          }
          if (error instanceof PromptStalledError && !ctx.signal.aborted) {
            lease.suspect(error);
            if (!stalledOn && pool.hasOther(lease.client, job.servers)) {
              stalledOn = lease.client;
              continue;
            }
            throw error;
          }
          if (error instanceof ServerUnavailableError && !ctx.signal.aborted) {
            lease.fail(error);
            if (attempt < tries) continue;
          }
          lease.release();
          // A refused graph, or one that failed while it ran, would fail the same way again.
          if (error instanceof PromptRejectedError || error instanceof PromptFailedError) {
            throw new EngineInputError(error.message);
          }
          throw error;
        } finally {
          releaseModels?.();
        }
      }
    },
  };
}

/** Each warm-up family's graph, compiled once; a family whose compiler is not here is left out. */
function warmupPrompts(
  options: ComfyuiEngineOptions,
  compilers: ReadonlyMap<string, PipelineCompiler>,
  log: (line: string) => void,
): { family: WarmupFamily; prompt: ApiPrompt }[] {
  return (options.warmup ?? []).flatMap((family) => {
    const compiler = compilers.get(WARMUP_FAMILIES[family].pipeline);
    if (!compiler) return [];
    try {
      return [{ family, prompt: warmupPrompt(family, compiler, options.checkpoints) }];
    } catch (error) {
      log(`COMFYUI_WARMUP: no ${family} warm-up: ${(error as Error).message}`);
      return [];
    }
  });
}

/**
 * The node classes every request of a pipeline uses: its compiler's, but for those of the node
 * packs only some request fields call for.
 */
function everyRequestClasses(compiler: PipelineCompiler): string[] {
  const optional = new Set(
    (compiler.requires.packs ?? []).filter((pack) => pack.when).map((pack) => pack.name as NodePack),
  );
  return compiler.requires.nodes.filter((node) => {
    const pack = packOfClass(node);
    return pack === undefined || !optional.has(pack);
  });
}

/**
 * The submission check of what the servers can run: the request's graph (compiled with stand-in
 * upload names) against what each server the request may go to said it has, without I/O. A request
 * none of them can run is refused at the field it comes from; where no field can be blamed (a file
 * the settings name), the task is queued and fails at once when a worker takes it, in the same words.
 */
function capabilityRefusal(
  pool: ServerPool,
  compiler: PipelineCompiler,
  input: Readonly<Record<string, unknown>>,
  settings: Pick<CompileContext, 'checkpoints' | 'families'>,
): SubmissionRefusal | null {
  const reference = pool.reference;
  if (!reference) return null;
  let prompt: CompiledWorkflow['prompt'];
  try {
    const images = Object.fromEntries(
      Object.entries(input)
        .filter(([field]) => endpointByPath(compiler.pipeline)?.imageFields.includes(field))
        .map(([field, value]) => [field, Array.isArray(value) ? value.map(() => 'input.png') : 'input.png']),
    );
    prompt = compiler.compile({
      input,
      seed: 0,
      images,
      filenamePrefix: 'imagegen/admit/img',
      ...settings,
    }).prompt;
  } catch {
    // Input the compiler refuses is refused by the worker, in the compiler's words.
    return null;
  }
  // An owner's model (32 hex digits) is the worker's to resolve and check on the server it gets.
  const needs = graphNeeds(prompt, reference.objectInfo, (value) => USER_MODEL_FILE.test(value));
  const server =
    typeof input.server_id === 'string' && pool.names.includes(input.server_id) ? input.server_id : undefined;
  const lacking = pool.lacks(needs, server ? [server] : undefined);
  if (!lacking) return null;
  const field = blamedField(compiler, input, needs, pool, server);
  return field ? { field, message: lacking, type: 'value_error.server_capability' } : null;
}

/** An owner's model file: its 32-hex-digit model id and an extension. */
const USER_MODEL_FILE = /^[0-9a-f]{32}\.[a-z]+$/;

/**
 * The request field a missing need comes from, when every missing need comes from one: a node
 * pack's class from the field that calls for the pack, a checkpoint from `model_id`, a file
 * named after a value of the request from that field. Undefined when it cannot be told.
 */
function blamedField(
  compiler: PipelineCompiler,
  input: Readonly<Record<string, unknown>>,
  needs: readonly GraphNeed[],
  pool: ServerPool,
  server: string | undefined,
): string | undefined {
  const missing = pool.missingNeeds(needs, server ? [server] : undefined);
  const fields = new Set<string | undefined>();
  for (const need of missing) {
    if (need.kind === 'class') {
      const pack = packOfClass(need.classType);
      const when = compiler.requires.packs?.find((use) => use.name === pack)?.when;
      // The field the pack's `when` names that the request sets (several may call for one pack).
      const named = [...(when ?? '').matchAll(/`([a-z_]+)/g)].map((match) => match[1]!);
      fields.add(named.find((field) => input[field] !== undefined && input[field] !== false) ?? named[0]);
    } else if (modelKind(need.classType, need.input) === 'checkpoint' && 'model_id' in input) {
      fields.add('model_id');
    } else {
      const stem = need.value.replace(/\.[^.]*$/, '');
      fields.add(
        Object.entries(input).find(([, value]) =>
          [value].flat().some((item) => typeof item === 'string' && item !== '' && stem.includes(item)),
        )?.[0],
      );
    }
  }
  const [only] = fields;
  return fields.size === 1 ? only : undefined;
}

/** How long freeing a server's memory may take before the job goes on without it. */
const FREE_TIMEOUT_MS = 10_000;

/**
 * The run's moments, recorded with the task (not shown to its owner): the server's stamps in its
 * own clock, ours in this process's, all epoch milliseconds. The comfyui benchmark reads them.
 */
function timingMeta(ran: {
  timing?: PromptTiming;
  outputsAt: number;
  promptId: string;
}): Record<string, number | string> {
  const timing = ran.timing;
  if (!timing) return {};
  return {
    comfyui_prompt_id: ran.promptId,
    comfyui_submitted_at: timing.submittedAt,
    ...(timing.serverStartedAt === undefined ? {} : { comfyui_started_at: timing.serverStartedAt }),
    ...(timing.serverEndedAt === undefined ? {} : { comfyui_ended_at: timing.serverEndedAt }),
    comfyui_end_seen_at: timing.endSeenAt,
    comfyui_outputs_at: ran.outputsAt,
  };
}

/** Whether a pipeline trains a model (the contract's training kind): its result is a model file. */
function trains(pipeline: string): boolean {
  return endpointByPath(pipeline)?.kind === 'training';
}

interface TaskPlan {
  readonly job: EngineJob;
  /** The owner's models the graph loads (the job's, but for a training's own). */
  readonly uses: EngineJob['models'];
  readonly compiler: PipelineCompiler;
  readonly key: string;
  readonly checkpoints: Readonly<Record<string, string>>;
  readonly families?: Readonly<Record<string, CheckpointFamily>>;
}

interface RunPlan extends TaskPlan {
  readonly signal: AbortSignal;
  readonly progress: ProgressFollower;
  /** Where the sampler's previews go (the worker's `RunContext.preview`), when anywhere. */
  readonly preview?: (image: PromptPreview) => void;
}

function compile(
  task: TaskPlan,
  images: CompileContext['images'],
  submission?: string,
  device?: string,
): CompiledWorkflow {
  return task.compiler.compile({
    input: task.job.input,
    seed: task.job.seed,
    images,
    imageSizes: imageSizes(task.job.images),
    filenamePrefix: `imagegen/${task.key}/img`,
    ...(submission ? { submission } : {}),
    ...(device ? { device } : {}),
    checkpoints: task.checkpoints,
    ...(task.families ? { families: task.families } : {}),
    ...(task.uses ? { models: task.uses } : {}),
  });
}

function imageSizes(images: EngineJob['images']): CompileContext['imageSizes'] {
  const size = ({ width, height }: InputImage): ImageSize => ({ width, height });
  return Object.fromEntries(
    Object.entries(images).map(([field, value]) => [field, isList(value) ? value.map(size) : size(value)]),
  );
}

/**
 * One run on one server: upload the inputs, submit the graph and follow it, then fetch the
 * outputs (and the model file a training saved). The slot is given back as soon as ComfyUI is
 * done, before the downloads, so the next prompt reaches the server at once.
 */
async function runOn(
  lease: ServerLease,
  task: RunPlan,
): Promise<{
  images: OutputImage[];
  texts: readonly string[];
  model?: Buffer;
  promptId: string;
  timing?: PromptTiming;
  outputsAt: number;
}> {
  const { client } = lease;
  const { signal } = task;
  const submit = async (): Promise<{
    outputs: PromptOutputs;
    workflow: CompiledWorkflow;
    promptId: string;
  }> => {
    const names =
      Object.keys(task.job.images).length === 0 ? requestedNames(task) : await upload(client, task, signal);
    // The prompt id names the submission: files no one reports go to a folder of its own.
    const promptId = randomUUID();
    // For the server it goes to: a pack node may take that server's device by name.
    const workflow = compile(task, names, promptId, lease.device);
    const outputs = await client.run(workflow.prompt, {
      promptId,
      outputNodes: workflow.outputNodes,
      signal,
      onProgress: task.progress.onProgress,
      onNodeStart: task.progress.onNodeStart,
      ...(task.preview ? { onPreview: task.preview } : {}),
      // ComfyUI's training node reports no step until a later release: an hour-long training is
      // silent all along, which is no stall.
      ...(trains(task.job.pipeline) ? { stallMs: Number.POSITIVE_INFINITY } : {}),
    });
    return { outputs, workflow, promptId };
  };
  let ran: Awaited<ReturnType<typeof submit>>;
  try {
    ran = await submit();
  } catch (error) {
    if (!(error instanceof PromptLostError)) throw error;
    // The server restarted and forgot the prompt (its history is in memory): submitted once more,
    // under a new id so nothing can mistake the two. A second loss fails the attempt.
    ran = await submit();
  }
  lease.completed();
  const { outputs, workflow, promptId } = ran;
  const [images, model] = await Promise.all([
    Promise.all(outputs.files.map(async (file) => decode(await client.view(file, signal), file))),
    workflow.modelFile ? client.view(workflow.modelFile, signal) : undefined,
  ]);
  return {
    images,
    texts: outputs.texts,
    ...(model ? { model } : {}),
    promptId,
    ...(outputs.timing ? { timing: outputs.timing } : {}),
    outputsAt: Date.now(),
  };
}

/** The names asked for on upload: the task's key keeps them apart from every other task's. */
function requestedNames(task: TaskPlan): Record<string, string | string[]> {
  const names: Record<string, string | string[]> = {};
  for (const [field, value] of Object.entries(task.job.images)) {
    const name = (image: InputImage, n?: number) =>
      `imagegen-${task.key}-${field}${n === undefined ? '' : `-${n}`}.${extension(image.contentType)}`;
    names[field] = isList(value) ? value.map((image, n) => name(image, n)) : name(value);
  }
  return names;
}

/** Uploads every input image; answers the names the server gave them (not always the ones asked). */
async function upload(
  client: ComfyClient,
  task: TaskPlan,
  signal: AbortSignal,
): Promise<Record<string, string | string[]>> {
  const asked = requestedNames(task);
  const given: Record<string, string | string[]> = {};
  for (const [field, value] of Object.entries(task.job.images)) {
    const names = asked[field]!;
    const one = (image: InputImage, name: string) =>
      client.upload({ name, data: image.data, contentType: image.contentType }, signal);
    given[field] = isList(value)
      ? await Promise.all(value.map((image, n) => one(image, (names as string[])[n]!)))
      : await one(value, names as string);
  }
  return given;
}

function isList(value: InputImage | readonly InputImage[]): value is readonly InputImage[] {
  return Array.isArray(value);
}

function extension(contentType: string): string {
  const subtype = contentType.split('/')[1]?.split(/[;+]/)[0];
  return subtype === 'jpeg' ? 'jpg' : subtype || 'png';
}

const CONTENT_TYPES: Readonly<Record<string, OutputImage['contentType']>> = {
  png: 'image/png',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
};

/** An output file as the worker stores it: its true format and size, read from the bytes. */
async function decode(data: Buffer, file: FileRef): Promise<OutputImage> {
  // SaveImage writes PNG: its size is in the header, no decoder needed on the busy path.
  const png = pngSize(data);
  if (png) return { data, contentType: 'image/png', ...png };
  let meta: Metadata;
  try {
    meta = await sharp(data).metadata();
  } catch (error) {
    throw new Error(`ComfyUI output ${file.filename} is not an image: ${(error as Error).message}`);
  }
  const contentType = CONTENT_TYPES[meta.format ?? ''];
  if (!contentType || !meta.width || !meta.height) {
    throw new Error(
      `ComfyUI output ${file.filename} is ${meta.format ?? 'of no known format'}, not PNG, JPEG or WebP`,
    );
  }
  return { data, contentType, width: meta.width, height: meta.height };
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** A PNG's size from its IHDR chunk (always first), or null when the bytes are not a PNG. */
function pngSize(data: Buffer): { width: number; height: number } | null {
  if (data.length < 24 || !data.subarray(0, 8).equals(PNG_SIGNATURE)) return null;
  if (data.toString('latin1', 12, 16) !== 'IHDR') return null;
  const width = data.readUInt32BE(16);
  const height = data.readUInt32BE(20);
  return width > 0 && height > 0 ? { width, height } : null;
}
