import { createComfyClient } from '../comfyui/client/index.ts';
import { createComfyuiEngine } from '../comfyui/comfyui-engine.ts';
import { compilerFor } from '../comfyui/compilers/index.ts';
import type { ComfyClient } from '../comfyui/contracts.ts';
import type { EngineJob } from '../engine.ts';
import {
  caseJob,
  compileCase,
  modelFilesOf,
  PIPELINE_SUITE,
  type PipelineCase,
} from './comfyui-pipeline-suite.ts';

/**
 * The pipeline suite against a ComfyUI server: each case whose graph the server can run (its node
 * classes installed, its model files present, as `/object_info` and `/models/*` tell) runs through
 * the comfyui engine and must answer images of the right count and size; the others are skipped,
 * saying what the server lacks.
 */

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
  const engine = createComfyuiEngine({
    servers: [client],
    compilers: [...new Set((options.cases ?? PIPELINE_SUITE).map((c) => compilerFor(c.pipeline)!))],
    checkpoints,
  });
  await engine.start?.();
  const outcomes: CaseOutcome[] = [];
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
        const job = await caseJob(testCase);
        const lacks = await missingOnServer(testCase, job, checkpoints, objectInfo, filesIn);
        if (lacks.length > 0) {
          settle('skipped', `the server lacks ${lacks.join(', ')}`);
          continue;
        }
        const result = await engine.run(job, {
          signal: new AbortController().signal,
          progress: (fraction, message) => options.onProgress?.(testCase.name, fraction, message),
        });
        const { count, width, height, text } = testCase.expect;
        const sizes = result.images.map((image) => `${image.width}x${image.height}`);
        const wrong = sizes.filter((size) => size !== `${width}x${height}`);
        if (text && !result.text) {
          settle('failed', 'expected a text, got none');
        } else if (text) {
          settle('ran', `the text '${result.text}'`);
        } else if (result.images.length !== count || wrong.length > 0) {
          settle(
            'failed',
            `expected ${count} image(s) of ${width}x${height}, got ${sizes.join(', ') || 'none'}`,
          );
        } else {
          settle('ran', `${count} image(s) of ${width}x${height}`);
        }
      } catch (error) {
        settle('failed', (error as Error).message);
      }
    }
  } finally {
    await engine.close?.();
  }
  return outcomes;
}

/** The node classes and model files the case's graph needs and the server has not got. */
async function missingOnServer(
  testCase: PipelineCase,
  job: EngineJob,
  checkpoints: Readonly<Record<string, string>>,
  objectInfo: Readonly<Record<string, unknown>>,
  filesIn: (folder: string) => Promise<Set<string>>,
): Promise<string[]> {
  const { prompt } = compileCase(testCase, job, checkpoints);
  const nodes = [...new Set(Object.values(prompt).map((node) => node.class_type))]
    .filter((classType) => !(classType in objectInfo))
    .map((classType) => `node class ${classType}`);
  const files: string[] = [];
  for (const [folder, names] of Object.entries(modelFilesOf(prompt))) {
    const present = await filesIn(folder);
    for (const name of names) if (!present.has(name)) files.push(`${folder}/${name}`);
  }
  return [...nodes, ...files];
}
