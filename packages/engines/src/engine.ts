/**
 * The one narrow interface between the worker and whatever computes images.
 *
 * The worker knows nothing of ONNX, tfjs or ComfyUI; an engine knows nothing of HTTP, SQL or
 * where inputs came from. The worker fetches every input image (SSRF-safe) before `run`, resolves
 * the seed, and stores what `run` returns.
 */

/**
 * A pipeline is named by its submission path in the contract's endpoint table, e.g.
 * `/sd/text2image/v1` or `/bgremover/v1`: one name, used in configuration, `/health`, logs and
 * the `no engine serves <pipeline>` error.
 */
export type Pipeline = string;

export interface InputImage {
  /** The bytes as fetched; the content was sniffed, so `contentType` is trustworthy. */
  readonly data: Buffer;
  readonly contentType: string;
  readonly width: number;
  readonly height: number;
  /** The URL it came from, for error messages only. */
  readonly url: string;
}

export interface EngineJob {
  readonly pipeline: Pipeline;
  /** The validated request with every default filled in (the contract's output). */
  readonly input: Readonly<Record<string, unknown>>;
  /**
   * Every image URL field of the request, fetched: a single image for a string field, a list in
   * request order for a list field. Keyed by the request's field name (e.g. `init_image`).
   */
  readonly images: Readonly<Record<string, InputImage | readonly InputImage[]>>;
  /** The seed to use; never -1 (the worker draws one for -1 and records it). */
  readonly seed: number;
  /**
   * For an engine that sends work to named servers (comfyui): only these may run the job, from
   * the task's `server_id` routing. Absent: any of them. Other engines ignore it.
   */
  readonly servers?: readonly string[];
  /**
   * The owner's models the task names, by model id, resolved by the worker from the owner's rows
   * only (another owner's id is never here): for a generation, the loaded models its `model_id`,
   * `lora_models` and `embeddings` name; for load_model and sync_model, the one model loaded or
   * synced; for train_model, the one model it trains (registered, not yet ready). Absent: none.
   */
  readonly models?: Readonly<Record<string, JobModel>>;
}

/**
 * Public model ids (`models.model_id`) are 32 lower-case hex digits: a name of that form in a
 * request is one of the owner's models, never a file name, so it is refused unless resolved.
 */
export const USER_MODEL_ID = /^[0-9a-f]{32}$/;

/** One of the owner's models as an engine needs it: what it is, what it extends, where it came from. */
export interface JobModel {
  readonly modelId: string;
  /** `checkpoint`, `lora` or `embedding` (load_model's types), `lora` for a trained model. */
  readonly modelType: string;
  /** `sd1.5`, `sdxl` or `flux`. */
  readonly baseModel: string;
  /** `safetensors` or `ckpt`; null when the load named none (no file: pretrained_model_path). */
  readonly extension: string | null;
  /** Where a load_model downloads the file from; null without `model_url`. */
  readonly url: string | null;
}

/**
 * Streams a model file from a URL a user gave (the server's SSRF-safe fetcher, injected): an
 * engine that stores model files never makes a request of its own. Throws an Error whose message
 * is fit for the owner (refused address, HTTP status); `length` is the declared Content-Length.
 */
export type ModelSource = (
  url: string,
  signal: AbortSignal,
) => Promise<{ readonly length: number | null; readonly body: AsyncIterable<Uint8Array> }>;

export interface OutputImage {
  readonly data: Buffer;
  readonly contentType: 'image/png' | 'image/jpeg' | 'image/webp';
  readonly width: number;
  readonly height: number;
}

/** What an engine produced for the model record of its task (load_model, train_model). */
export interface ModelOutput {
  /** Tags added to the model's comma-separated `tags`. */
  readonly tags?: readonly string[];
  /** Text put in front of the model's description. */
  readonly descriptionNote?: string;
  /** The sha256 (hex) of the model file the task stored, computed while it was written. */
  readonly sha256?: string;
  /** The model file's size in bytes. */
  readonly bytes?: number;
}

export interface EngineResult {
  /** The task's pictures; for a training, its model's sample images (its validation prompt drawn). */
  readonly images: readonly OutputImage[];
  /** Text output, for pipelines that describe rather than draw (image2prompt). */
  readonly text?: string;
  /**
   * For a task that produces or registers a model: how the worker marks its model record when
   * the task succeeds (e.g. the sandbox's training output is tagged as a sandbox model).
   */
  readonly model?: ModelOutput;
  /**
   * Facts the engine wants recorded with the task (model used, timings). Never secrets. The
   * worker stores them and reads nothing from them.
   */
  readonly meta?: Readonly<Record<string, unknown>>;
  /**
   * What the task did otherwise than its request reads, in words for its owner, each naming the
   * field: a field the model takes no notice of, a prompt used as given. Shown with the task's
   * status (`notes`) and logged; never a reason to fail.
   */
  readonly notes?: readonly string[];
}

export interface RunContext {
  /** Aborted when the task's lease is lost, the worker shuts down, or the task is cancelled. */
  readonly signal: AbortSignal;
  /** Reports progress in [0, 1]; cheap to call often (the worker throttles what it stores). */
  progress(fraction: number, message?: string): void;
  /**
   * Shows the picture as it forms (a sampler's step preview, as ComfyUI sends it when started with
   * a preview method). Cheap to call at every step: the worker keeps the newest and hands on at
   * most a few a second. Absent where nobody can see them; an engine with none never calls it.
   */
  preview?(image: PreviewImage): void;
}

/** A picture of a task while it runs: not an output, never stored with the task. */
export interface PreviewImage {
  readonly data: Buffer;
  readonly contentType: 'image/jpeg' | 'image/png';
}

/**
 * An error the task's owner should read as is: it becomes the task's FAILURE `error` text.
 * Anything else thrown by an engine is reported as an internal engine error (and retried).
 */
export class EngineInputError extends Error {
  override readonly name = 'EngineInputError';
}

/** One server an engine sends work to (a ComfyUI server), as `/health` shows it. */
export interface EngineServer {
  /** Its name; servers sharing one form a group, and an enterprise `server_id` names either. */
  readonly name: string;
  readonly url: string;
  /** `unknown` until its first health check. */
  readonly state: 'unknown' | 'up' | 'down';
  /** Prompts running or waiting on it: ours now, plus others' as of its last check. */
  readonly queue: number;
  /** Our prompts on it now. */
  readonly inFlight: number;
  /** The checkpoint of the last prompt sent to it (what it holds loaded), or null. */
  readonly checkpoint: string | null;
  /** Why it is down, when it is. */
  readonly error?: string;
  /**
   * Why it is suspect, when it is: a prompt stalled there (it made no progress for the stall
   * bound and was interrupted). It still answers its checks, so it is not down; it is cleared when
   * a prompt completes on it again.
   */
  readonly suspect?: string;
  /** Prompts that ran out of memory there since this process started. */
  readonly outOfMemory?: number;
  /**
   * The pipelines it can run, as it last said what it has (every request of the pipeline aside
   * from the node packs only some fields use, and the model files requests name). Absent until
   * read.
   */
  readonly runs?: readonly string[];
  /** How many node classes it has installed, as it last said. */
  readonly nodeClasses?: number;
}

/** Figures an engine reports for `/metrics`. */
export interface EngineFigures {
  /** The owners' models an engine stores and evicts within a disk budget (COMFYUI_MODELS_BUDGET). */
  readonly models?: {
    /** Their bytes now (the fullest model folder's). */
    readonly bytes: number;
    readonly budgetBytes: number;
    /** Files removed for the budget since the process started. */
    readonly evictions: number;
  };
}

/**
 * A request an engine refuses at submission, before anything is queued: the API answers 422 with
 * one pydantic-v1 entry located at `["body", field]`, as it answers a malformed field.
 */
export interface SubmissionRefusal {
  /** The request field at fault (`model_id`). */
  readonly field: string;
  /** Plain words for the caller: what is wrong and what the pipeline needs instead. */
  readonly message: string;
  /** The entry's pydantic-style `type`, e.g. `value_error.model_family`. */
  readonly type: string;
}

export interface Engine {
  /** Short, stable name used in configuration and `/health` (`cpu`, `sandbox`, `comfyui`). */
  readonly name: string;
  /** The pipelines this engine can serve for real (the sandbox engine: placeholder output). */
  readonly pipelines: readonly Pipeline[];
  /**
   * Jobs the engine can take at once to keep its hardware busy (comfyui: enough for every server
   * to run one prompt with one queued behind it). The worker runs that many tasks at once unless
   * configured otherwise. Absent: one.
   */
  readonly capacity?: number;
  /**
   * The servers the engine sends work to, live. Their names are enterprise server ids: the worker
   * claims the tasks routed to them and passes the routing on in `EngineJob.servers`.
   */
  servers?(): readonly EngineServer[];
  /**
   * Checks a validated request of one of its pipelines against what the engine knows without
   * running it (its settings, the models its graphs fit), when the API receives it: a refusal is
   * answered 422 at once instead of a task that would fail. Synchronous and cheap (no I/O, no
   * owner's models: what only the worker can know is still checked by `run`). Absent: everything
   * is admitted.
   */
  admit?(pipeline: Pipeline, input: Readonly<Record<string, unknown>>): SubmissionRefusal | null;
  /** Loads models once; called before the first `run`. Idempotent. */
  start?(): Promise<void>;
  /**
   * What `start` is doing now, in a few words (`fetching models (2 of 5: …)`), for the worker's
   * readiness; null when it is not starting. Absent: nothing to say.
   */
  startup?(): string | null;
  /** The engine's own figures for `/metrics` (comfyui: its model folders' disk budget). */
  figures?(): EngineFigures;
  run(job: EngineJob, ctx: RunContext): Promise<EngineResult>;
  /** Releases models and worker threads. */
  close?(): Promise<void>;
}

/**
 * Cheap CPU checks the worker runs before handing a job to any engine, so bad input fails at
 * once instead of after GPU time is spent (e.g. a face-swap input without a face). A check throws
 * EngineInputError to fail the task; it returns normally otherwise.
 */
export interface Preflight {
  /** The pipelines this check applies to. */
  readonly pipelines: readonly Pipeline[];
  check(job: EngineJob, signal: AbortSignal): Promise<void>;
}

export interface SafetyVerdict {
  readonly unsafe: boolean;
  /** Class scores in [0, 1] as the classifier gave them, e.g. { Porn: 0.93, Neutral: 0.02 }. */
  readonly scores: Readonly<Record<string, number>>;
}

/** Classifies output images when a request sets `safety_checker: true`, on every engine. */
export interface SafetyChecker {
  classify(image: OutputImage, signal: AbortSignal): Promise<SafetyVerdict>;
  close?(): Promise<void>;
}
