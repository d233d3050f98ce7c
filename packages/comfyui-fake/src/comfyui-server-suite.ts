import { createHash } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  type ComfyClient,
  compilerFor,
  createComfyClient,
  createComfyuiEngine,
  type ObjectInfo,
} from '@imagegen/engine-comfyui/engine';
import type { Engine, EngineJob, EngineResult, JobModel, RunContext } from '@imagegen/engines';
import {
  caseJob,
  compileCase,
  modelFilesOf,
  modelInputsOf,
  PIPELINE_SUITE,
  type PipelineCase,
  unmetNeeds,
} from './comfyui-pipeline-suite.ts';
import { inputOptions } from './fake-comfyui/model-lists.ts';

/**
 * The pipeline suite against a ComfyUI server: each case whose graph the server can run (its node
 * classes installed, its model files offered by their loaders, as `/object_info` tells) runs through
 * the comfyui engine and must answer images of the right count and size; the others are skipped,
 * saying what the server lacks.
 */

/** The pipeline that draws with a trained LoRA to show it loads. */
const LORA_CHECK = '/sd/text2image/v1';

export interface CaseOutcome {
  readonly name: string;
  readonly outcome: 'ran' | 'skipped' | 'failed';
  /** What ran (`2 images 128x192`), what the server lacks, or why it failed. */
  readonly detail: string;
  readonly seconds: number;
}

export interface ServerSuiteOptions {
  /** COMFYUI_CHECKPOINTS of the deployment under test. */
  readonly checkpoints?: Readonly<Record<string, string>>;
  /**
   * The `models/` folder the server reads (COMFYUI_MODELS_DIR), where a training stores its LoRA;
   * when the server then lists it, a text2image naming it proves it loads. Default: a temporary
   * folder, where the LoRA is only checked.
   */
  readonly modelsDir?: string;
  /** The cases to run (default: the whole suite). */
  readonly cases?: readonly PipelineCase[];
  /** Told each outcome as it comes, and each run's progress. */
  readonly onOutcome?: (outcome: CaseOutcome) => void;
  readonly onProgress?: (name: string, fraction: number, message?: string) => void;
  /** A client of one's own (default: one for `url`). */
  readonly client?: ComfyClient;
}

export async function runServerSuite(url: string, options: ServerSuiteOptions = {}): Promise<CaseOutcome[]> {
  const client = options.client ?? createComfyClient({ url });
  const checkpoints = options.checkpoints ?? {};
  const objectInfo = await client.objectInfo();
  const folders = new Map<string, Promise<Set<string>>>();
  const filesIn = (folder: string) => {
    if (!folders.has(folder))
      folders.set(
        folder,
        client.models(folder).then((names) => new Set(names)),
      );
    return folders.get(folder)!;
  };
  const scratch = options.modelsDir
    ? undefined
    : await mkdtemp(path.join(tmpdir(), 'imagegen-suite-models-'));
  const modelsDir = options.modelsDir ?? scratch!;
  const engine = createComfyuiEngine({
    servers: [client],
    // text2image too: it draws with what a training made.
    compilers: [...new Set([...(options.cases ?? PIPELINE_SUITE).map((c) => c.pipeline), LORA_CHECK])].map(
      (pipeline) => compilerFor(pipeline)!,
    ),
    checkpoints,
    modelFiles: {
      folders: { shared: modelsDir, byServer: {} },
      maxBytes: Number.MAX_SAFE_INTEGER,
      fetch: () => Promise.reject(new Error('the pipeline suite downloads no model')),
    },
  });
  await engine.start?.();
  const outcomes: CaseOutcome[] = [];
  const progress = (name: string) => (fraction: number, message?: string) =>
    options.onProgress?.(name, fraction, message);
  try {
    for (const testCase of options.cases ?? PIPELINE_SUITE) {
      const started = performance.now();
      const settle = (outcome: CaseOutcome['outcome'], detail: string) => {
        const result = {
          name: testCase.name,
          outcome,
          detail,
          seconds: (performance.now() - started) / 1000,
        };
        outcomes.push(result);
        options.onOutcome?.(result);
      };
      try {
        const unmapped = unmetNeeds(testCase, checkpoints);
        if (unmapped.length > 0) {
          settle('skipped', `COMFYUI_CHECKPOINTS maps no ${unmapped.join(', ')}`);
          continue;
        }
        const job = await caseJob(testCase);
        const placed = await placeOwnerModels(testCase, options.modelsDir, filesIn);
        if (placed) {
          settle('skipped', placed);
          continue;
        }
        const lacks = await missingOnServer(testCase, job, checkpoints, objectInfo, filesIn);
        if (lacks.length > 0) {
          settle('skipped', `the server lacks ${lacks.join(', ')}`);
          continue;
        }
        const signal = new AbortController().signal;
        const result = await engine.run(job, { signal, progress: progress(testCase.name) });
        const { count, width, height, text, model } = testCase.expect;
        const sizes = result.images.map((image) => `${image.width}x${image.height}`);
        const wrong = sizes.filter((size) => size !== `${width}x${height}`);
        const noted = notedFields(result.notes);
        const notes = testCase.expect.notes ?? [];
        if (noted.join() !== notes.join()) {
          settle(
            'failed',
            `expected notes on ${notes.join(', ') || 'nothing'}, got ${result.notes?.join('; ') || 'none'}`,
          );
        } else if (text && !result.text) {
          settle('failed', 'expected a text, got none');
        } else if (text) {
          settle('ran', `the text '${result.text}'`);
        } else if (result.images.length !== count || wrong.length > 0) {
          settle(
            'failed',
            `expected ${count} image(s) of ${width}x${height}, got ${sizes.join(', ') || 'none'}`,
          );
        } else if (model) {
          const trained = Object.values(job.models ?? {})[0]!;
          const used = await useTrainedLora(engine, client, modelsDir, trained, result, {
            signal,
            progress: progress(testCase.name),
          });
          settle(
            used.ok ? 'ran' : 'failed',
            `${count} sample image(s) of ${width}x${height}; ${used.detail}`,
          );
        } else {
          settle(
            'ran',
            `${count} image(s) of ${width}x${height}${noted.length > 0 ? `; noted ${noted.join(', ')}` : ''}`,
          );
        }
      } catch (error) {
        settle('failed', (error as Error).message);
      }
    }
  } finally {
    await engine.close?.();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  }
  return outcomes;
}

/**
 * A training's LoRA: stored under its model id with the sha256 the engine recorded, and, where the
 * server reads the folder it lies in, loaded by a text2image that names it in `lora_models`.
 */
async function useTrainedLora(
  engine: Engine,
  client: ComfyClient,
  modelsDir: string,
  trained: JobModel,
  result: EngineResult,
  ctx: RunContext,
): Promise<{ ok: boolean; detail: string }> {
  const file = `${trained.modelId}.safetensors`;
  const bytes = await readFile(path.join(modelsDir, 'loras', file));
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  if (result.model?.sha256 !== sha256 || result.model.bytes !== bytes.length) {
    return { ok: false, detail: `loras/${file} is not the file the engine recorded` };
  }
  const stored = `the LoRA loras/${file} (${bytes.length} bytes, sha256 ${sha256.slice(0, 12)}…)`;
  if (!(await client.models('loras')).includes(file)) {
    return { ok: true, detail: `${stored}; the server does not read ${modelsDir}, so it was not used` };
  }
  const generation = await caseJob({
    name: 'text2image with the trained LoRA',
    pipeline: LORA_CHECK,
    body: {
      prompt: 'a photo of sks lighthouse',
      negative_prompt: '',
      num_inference_steps: 2,
      width: 64,
      height: 64,
      lora_models: [trained.modelId],
    },
    images: {},
    expect: { count: 1, width: 64, height: 64 },
  });
  const drawn = await engine.run({ ...generation, models: { [trained.modelId]: trained } }, ctx);
  const ok = drawn.images.length === 1 && drawn.images[0]!.width === 64;
  return {
    ok,
    detail: `${stored}; a text2image with it in lora_models drew ${drawn.images.length} image(s)`,
  };
}

/** The fields a task's notes name (each note begins `<field>: `). */
export function notedFields(notes: readonly string[] | undefined): string[] {
  return (notes ?? []).map((note) => note.slice(0, note.indexOf(': ')));
}

/**
 * The owner's models a case names, each a copy of a file the server holds, put under its model id
 * in the models folder the server reads (COMFYUI_MODELS_DIR), as a load would: undefined when they
 * are in place, else why the case cannot run here.
 */
export async function placeOwnerModels(
  testCase: PipelineCase,
  modelsDir: string | undefined,
  filesIn: (folder: string) => Promise<Set<string>>,
): Promise<string | undefined> {
  for (const model of testCase.ownerModels ?? []) {
    if (!modelsDir)
      return `an owner's ${model.modelType} needs COMFYUI_MODELS_DIR, the models folder the server reads`;
    if (!(await filesIn(model.folder)).has(model.copyOf))
      return `the server lacks ${model.folder}/${model.copyOf}`;
    const target = path.join(modelsDir, model.folder, `${model.modelId}.safetensors`);
    await mkdir(path.dirname(target), { recursive: true });
    await copyFile(path.join(modelsDir, model.folder, model.copyOf), target);
  }
  return undefined;
}

/**
 * The node classes and model files the case's graph needs and the server has not got. A file is
 * there when the loader's input offers it in `/object_info`: that list is what the server checks a
 * graph against, and `/models/<folder>` cannot stand for it (it answers 404 for a legacy folder
 * name such as IC-Light's `unet`, and for a folder a pack globs without registering it, such as
 * ReActor's `insightface`). Only for a node class the server lacks is the folder asked.
 */
async function missingOnServer(
  testCase: PipelineCase,
  job: EngineJob,
  checkpoints: Readonly<Record<string, string>>,
  objectInfo: ObjectInfo,
  filesIn: (folder: string) => Promise<Set<string>>,
): Promise<string[]> {
  const { prompt } = compileCase(testCase, job, checkpoints);
  const nodes = [...new Set(Object.values(prompt).map((node) => node.class_type))]
    .filter((classType) => !(classType in objectInfo))
    .map((classType) => `node class ${classType}`);
  const lacking = new Set<string>();
  // The owner's files were just placed: the server lists them when a prompt asks.
  const owned = new Set((testCase.ownerModels ?? []).map((model) => `${model.modelId}.safetensors`));
  for (const { classType, input, folder, file } of modelInputsOf(prompt)) {
    if (owned.has(file)) continue;
    const offered =
      classType in objectInfo
        ? inputOptions(objectInfo, classType, input).includes(file)
        : (await filesIn(folder)).has(file);
    if (!offered) lacking.add(`${folder}/${file}`);
  }
  // In the order of modelFilesOf: by folder, then by name.
  const files = Object.entries(modelFilesOf(prompt)).flatMap(([folder, names]) =>
    names.map((name) => `${folder}/${name}`).filter((file) => lacking.has(file)),
  );
  return [...nodes, ...files];
}
