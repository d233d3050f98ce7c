/**
 * The seams of the comfyui engine, declared before the parts behind them: the compilers (request →
 * ComfyUI graph), the client (one ComfyUI server over HTTP + WebSocket) and the pool (which server
 * runs the next prompt). Each part depends on these types, not on another part's internals.
 */
import type { JobModel, Pipeline, Refusal, ServerRequirements, SubmissionRefusal } from '@imagegen/engines';
import type { CheckpointFamily } from './checkpoint-roles.ts';

// ── ComfyUI's wire shapes (API format) ────────────────────────────────────────────────────────

/** A link from one node's output: `[source node id, output index]`. */
export type NodeLink = readonly [string, number];

/** One node of an API-format graph, as `POST /prompt` takes it. */
export interface ApiNode {
  readonly class_type: string;
  readonly inputs: Readonly<Record<string, unknown>>;
  readonly _meta?: { readonly title: string };
}

/** An API-format graph: node id → node. */
export type ApiPrompt = Readonly<Record<string, ApiNode>>;

/** `GET /object_info`: node class → definition (only the parts the engine reads are typed). */
export type ObjectInfo = Readonly<Record<string, NodeDefinition>>;

export interface NodeDefinition {
  readonly input: {
    readonly required?: Readonly<Record<string, InputSpec>>;
    readonly optional?: Readonly<Record<string, InputSpec>>;
    readonly hidden?: Readonly<Record<string, unknown>>;
  };
  readonly input_order?: Readonly<Record<string, readonly string[]>>;
  readonly output: readonly (string | readonly string[])[];
  readonly output_is_list?: readonly boolean[];
  readonly output_name?: readonly string[];
  readonly output_node?: boolean;
  readonly name: string;
  readonly category?: string;
}

/**
 * An input's declaration: `[type]` or `[type, options]`, where type is a name (`INT`, `MODEL`…) or a
 * list of allowed values (a COMBO), and options hold `default`, `min`, `max`, `step`…
 */
export type InputSpec = readonly [string | readonly unknown[], Readonly<Record<string, unknown>>?];

/** What a prompt's output nodes answered: their saved files, and the text of those that show text. */
export interface PromptOutputs {
  readonly files: FileRef[];
  readonly texts: string[];
  /** When things happened, for the task's record and the benchmark's account of the gateway's time. */
  readonly timing?: PromptTiming;
}

/**
 * A prompt's moments: those of the server in its own clock (its messages' `timestamp`, epoch ms),
 * the gateway's in this process's (epoch ms).
 */
export interface PromptTiming {
  /** POST /prompt sent (gateway clock). */
  readonly submittedAt: number;
  /** `execution_start`, `execution_success` as the server stamped them; absent when not seen. */
  readonly serverStartedAt?: number;
  readonly serverEndedAt?: number;
  /** The prompt's end was known here (gateway clock). */
  readonly endSeenAt: number;
}

/** A file reference in a history entry's outputs (`/view` takes the same three fields). */
export interface FileRef {
  readonly filename: string;
  readonly subfolder: string;
  readonly type: 'output' | 'temp' | 'input';
}

// ── Compilers: one per pipeline ───────────────────────────────────────────────────────────────

/** What a compiler needs besides the request: every value the caller decided for it. */
export interface CompileContext {
  /** The validated request with defaults filled in (the contract's output). */
  readonly input: Readonly<Record<string, unknown>>;
  /** The task's seed (never -1). */
  readonly seed: number;
  /**
   * Input images already uploaded to the ComfyUI server, by request field: the names LoadImage
   * takes (a list for a list field, in request order).
   */
  readonly images: Readonly<Record<string, string | readonly string[]>>;
  /**
   * The pixel size of each input image as fetched, by request field (a list for a list field), for
   * a graph whose sizes follow its inputs (training never enlarges a photo). Absent: unknown.
   */
  readonly imageSizes?: Readonly<Record<string, ImageSize | readonly ImageSize[]>>;
  /** Unique per task, so ComfyUI's cache never hands back another task's files. */
  readonly filenamePrefix: string;
  /**
   * Unique per submission of the graph (a resubmission after a restart gets another): where a node
   * saves a file it reports to no one, named after the files already in its folder (SaveLoRANode),
   * a folder of the submission's own makes the name certain. Absent: the graph is only inspected.
   */
  readonly submission?: string;
  /**
   * The request's model ids to checkpoint file names on the server, and `<id>:<role>` to the file
   * of that id in a role (COMFYUI_CHECKPOINTS; checkpoint-roles.ts has the words).
   */
  readonly checkpoints: Readonly<Record<string, string>>;
  /**
   * The families COMFYUI_CHECKPOINTS declares for the operator's own model ids (`my-xl:sdxl=…`).
   * Absent: none; the built-in ids' families are known without it.
   */
  readonly families?: Readonly<Record<string, CheckpointFamily>>;
  /**
   * The torch device type of the server the graph is submitted to (`cuda`, `cpu`, `mps`…), as its
   * `/system_stats` says, for the pack nodes that take a device by name. Absent before a server is
   * picked, or when it named none.
   */
  readonly device?: string;
  /**
   * The owner's models the request names, by model id (the job's `models`): their files are
   * `<model_id>.<ext>` in the folder of their type. Absent: none.
   */
  readonly models?: Readonly<Record<string, JobModel>>;
}

/** A compiled graph and what the engine needs to run it and read its result. */
export interface CompiledWorkflow {
  readonly prompt: ApiPrompt;
  /**
   * Output node ids whose `images` (type output) are the task's result, in result order, or whose
   * `text` is (PreviewAny, for the pipelines that describe a picture).
   */
  readonly outputNodes: readonly string[];
  /** The checkpoint file the graph loads, for model affinity; absent when it loads none. */
  readonly checkpoint?: string;
  /** Sampling nodes and their step counts, in run order: progress is steps done / their sum. */
  readonly samplingSteps: readonly { readonly node: string; readonly steps: number }[];
  /**
   * The node whose start turns the task from initialising to running (training's TrainLoraNode):
   * the engine reports progress 0 then, since the server may report no step of it. Absent: the
   * first sampling step does.
   */
  readonly runningFrom?: string;
  /**
   * The model file the graph saves (training: SaveLoRANode), named as ComfyUI names it. The node
   * answers no `ui`, so neither the socket nor `/history` says the name: the engine fetches the
   * file by this one after the run.
   */
  readonly modelFile?: FileRef;
  /**
   * Where the graph draws otherwise than the request reads, in words for its owner, each naming
   * the field (a field the model takes no notice of): the task's notes (`EngineResult.notes`).
   */
  readonly notes?: readonly string[];
}

/** A picture's size in pixels. */
export interface ImageSize {
  readonly width: number;
  readonly height: number;
}

// What a pipeline needs on the servers, and the refusals it declares: the catalogue's own types.
export type { Refusal, ServerRequirements };

/** What a submission check may read: the validated request and the settings, nothing of a server or an owner. */
export type AdmitContext = Pick<CompileContext, 'input' | 'checkpoints' | 'families'>;

export interface PipelineCompiler {
  readonly pipeline: Pipeline;
  readonly requires: ServerRequirements;
  /**
   * What the API refuses of a request at submission (the engine's `admit`): only what the
   * settings alone decide, in the words `compile` fails with, which still refuses it when a
   * worker gets such a task. Absent: nothing is refused before the task runs.
   */
  admit?(ctx: AdmitContext): SubmissionRefusal | null;
  /**
   * Request → graph. A field the graph cannot honour throws EngineInputError naming the field;
   * one the original service's own pipeline took no notice of in that case is noted in the
   * graph's `notes` (and listed in `requires.ignores`). None is silently ignored.
   */
  compile(ctx: CompileContext): CompiledWorkflow;
}

// ── The client: one ComfyUI server ────────────────────────────────────────────────────────────

/** How far a running prompt is: the current sampling node's step of its total. */
export interface PromptProgress {
  readonly node: string;
  readonly value: number;
  readonly max: number;
}

/** A preview frame of a running prompt: the picture its sampler holds. */
export interface PromptPreview {
  readonly data: Buffer;
  readonly contentType: 'image/jpeg' | 'image/png';
}

/** A prompt ComfyUI refused (400 or non-empty node_errors): `message` is plain words for the owner. */
export class PromptRejectedError extends Error {
  override readonly name = 'PromptRejectedError';
}

/**
 * A prompt that ComfyUI accepted but that failed while it ran (a node raised, or someone else
 * interrupted it): `message` names the node and the exception. Not retried: the graph would fail
 * again.
 */
export class PromptFailedError extends Error {
  override readonly name = 'PromptFailedError';
}

/**
 * A prompt that failed because its server ran out of memory (ComfyUI's out-of-memory error, or a
 * CPU allocation PyTorch could not make): not the graph's fault alone, so the engine frees the
 * server's memory and runs the job once more, on another server when there is one.
 */
export class ServerOutOfMemoryError extends Error {
  override readonly name = 'ServerOutOfMemoryError';
}

/** A prompt the server no longer knows (restarted, history lost): the engine resubmits it once. */
export class PromptLostError extends Error {
  override readonly name = 'PromptLostError';
}

/** A server that does not answer: the pool marks it down and the task runs elsewhere. */
export class ServerUnavailableError extends Error {
  override readonly name: string = 'ServerUnavailableError';
}

/**
 * A server whose port refuses connections: no process listens there (it crashed, was killed, or
 * is restarting). Certain at once, where a request that times out may only be slow.
 */
export class ServerRefusedError extends ServerUnavailableError {
  override readonly name = 'ServerRefusedError';
}

/**
 * A prompt that ran without a sign of progress for the stall bound (no message about it, no
 * history entry): the client has interrupted it; the pool marks its server suspect and the engine
 * runs the job once more on another server.
 */
export class PromptStalledError extends Error {
  override readonly name = 'PromptStalledError';
}

export interface ComfyServerStats {
  readonly comfyuiVersion: string;
  /** Prompts running plus pending on the server, from `/queue` or `/prompt`. */
  readonly queueRemaining: number;
  /**
   * The torch device type the server computes on (`cuda`, `cpu`, `mps`…): the first of
   * `/system_stats` `devices`. Absent when it names none.
   */
  readonly device?: string;
}

export interface ComfyClient {
  /** The server's name in errors, logs and `/health` (`gpu-1` from `gpu-1=http://…`, else host:port). */
  readonly name: string;
  readonly url: string;
  /** `/system_stats` and the queue length; throws ServerUnavailableError when the server is down. */
  stats(signal?: AbortSignal): Promise<ComfyServerStats>;
  objectInfo(signal?: AbortSignal): Promise<ObjectInfo>;
  /** `POST /free`: unload every model and free the memory ComfyUI holds (after an out-of-memory). */
  free(signal?: AbortSignal): Promise<void>;
  /**
   * Takes back the prompts given up on while the server did not answer (removed from its queue,
   * interrupted if running), so a server that was only cut off does not run them after the job
   * ran elsewhere. Called when the server answers again; answers how many it took back.
   */
  retake(signal?: AbortSignal): Promise<number>;
  /** File names in a model folder (`/models/{folder}`). */
  models(folder: string, signal?: AbortSignal): Promise<string[]>;
  /** Uploads an input image; answers the name the server gave it (use it, not the one asked for). */
  upload(image: { name: string; data: Buffer; contentType: string }, signal?: AbortSignal): Promise<string>;
  /**
   * Submits the graph under our own prompt id and follows it to the end (WebSocket, with `/history`
   * polling when the socket is silent or drops). Answers the output files of the given nodes
   * (type output only) and the text of those that show text. Throws PromptRejectedError, PromptFailedError, PromptLostError,
   * PromptStalledError, ServerOutOfMemoryError or ServerUnavailableError (ServerRefusedError: at once);
   * on abort it interrupts the prompt (targeted `/interrupt` and `/queue` delete) and rejects.
   */
  run(
    prompt: ApiPrompt,
    options: {
      readonly promptId: string;
      readonly outputNodes: readonly string[];
      readonly signal: AbortSignal;
      readonly onProgress?: (progress: PromptProgress) => void;
      /** Told each node of the prompt as it starts (`executing`); cached nodes never start. */
      readonly onNodeStart?: (node: string) => void;
      /** Told each preview frame of the prompt (a server started with `--preview-method`). */
      readonly onPreview?: (preview: PromptPreview) => void;
      /** This prompt's stall bound instead of the client's; Infinity: never stalled. */
      readonly stallMs?: number;
    },
  ): Promise<PromptOutputs>;
  view(file: FileRef, signal?: AbortSignal): Promise<Buffer>;
  close(): Promise<void>;
}
