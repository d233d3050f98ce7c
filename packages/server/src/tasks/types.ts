import type { WEBHOOK_EVENTS } from '@imagegen/contract';
import type { Pool, Queryable } from '@imagegen/db';
import type { EngineRegistry, Preflight, SafetyChecker } from '@imagegen/engines';
import type { ImageFetcher } from '../fetch/image-fetcher.ts';
import type { LineLog } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { BlobStore } from '../storage/blob-store.ts';
import type { PromptEnhancer } from './prompt-enhancer.ts';

export type { BlobStore, ImageFetcher };

/** The queue's states. The API maps them onto PENDING/SUCCESS/FAILURE (see status-body.ts). */
export type TaskState = 'queued' | 'running' | 'succeeded' | 'failed';

/** A moment a task's webhook can be called at (`webhook_events_filter`). */
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** Which status shape a task answers: the contract's endpoint kind for task-creating endpoints. */
export type TaskKind = 'generation' | 'load_model' | 'training';

export interface SubmitTaskParams {
  readonly ownerId: string;
  /** The submission path, which is also the pipeline name, e.g. `/sd/text2image/v1`. */
  readonly endpoint: string;
  readonly kind: TaskKind;
  /**
   * The validated request with defaults filled (the contract's output). `seed: -1` is resolved
   * here and recorded; `server_id`, `batch_id`, `file_prefix` and `queued_image_urls` are read
   * from it.
   */
  readonly input: Readonly<Record<string, unknown>>;
  /** Absolute base of download URLs, e.g. `http://localhost:8000` (no trailing slash). */
  readonly publicUrl: string;
  /** Attempts before FAILURE (default 3). */
  readonly maxAttempts?: number;
  /** The task's id, when the caller must know it before the task exists. Default: a new random uuid. */
  readonly id?: string;
  /** The id of the API request that submits it (X-Request-Id), recorded for the task's log lines. */
  readonly requestId?: string;
  /**
   * Its deadline (the Cancel-After header): past it the task fails, never run if still queued,
   * aborted if running. `text` is the duration as the caller wrote it, named by the error.
   */
  readonly cancelAfter?: { readonly ms: number; readonly text: string };
}

export interface SubmittedTask {
  readonly id: string;
  /** The seed the task will use (drawn when the request said -1); absent when it has none. */
  readonly seed?: number;
  /** With `queued_image_urls: true`: the final download URLs, valid once the task succeeds. */
  readonly outputUrls?: readonly string[];
}

/** One task row as the rest of the server reads it. */
export interface TaskRecord {
  readonly id: string;
  readonly ownerId: string;
  readonly endpoint: string;
  readonly kind: TaskKind;
  readonly input: Record<string, unknown>;
  readonly state: TaskState;
  readonly targetServer: string | null;
  readonly targetPool: string;
  readonly batchId: string | null;
  readonly attempts: number;
  readonly maxAttempts: number;
  readonly progress: number | null;
  readonly progressMessage: string | null;
  readonly result: TaskResult | null;
  readonly error: string | null;
  /** Blob keys of the outputs: pre-allocated with `queued_image_urls`, else set on success. */
  readonly outputKeys: readonly string[];
  readonly createdAt: Date;
  readonly startedAt: Date | null;
  readonly finishedAt: Date | null;
  /** The request id of its submission (null for tasks queued without one); absent where not read. */
  readonly requestId?: string | null;
  /** When the task must have ended (Cancel-After), and that duration as the caller wrote it; absent where not read. */
  readonly deadlineAt?: Date | null;
  readonly cancelAfter?: string | null;
}

/** What a succeeded task recorded (the `result` column). */
export interface TaskResult {
  /** Output images inline as base64 PNG/JPEG data, only when the request set `base64: true`. */
  readonly base64?: readonly string[];
  /** Text output (image2prompt). */
  readonly text?: string;
  /** load_model and train_model: the model the task produced or registered. */
  readonly model_id?: string | null;
  readonly training_duration_seconds?: number;
  /** The seed used, the engine that ran and what it reported. */
  readonly meta?: Readonly<Record<string, unknown>>;
  /** Where the task ran otherwise than its request reads (the engine's and the worker's notes). */
  readonly notes?: readonly string[];
}

/**
 * Writes a webhook outbox row (`enqueueWebhook` of the webhooks module): a `completed` one INSIDE
 * the transaction that finishes the task, `start` and `progress` ones on their own. `body` is the
 * status response the API gives for the task at that moment (taskWebhookBody).
 */
export type EnqueueWebhook = (
  db: Queryable,
  message: { ownerId: string; taskId: string; url: string; body: unknown; event?: WebhookEvent },
) => Promise<void>;

export interface WorkerOptions {
  /** The worker holds one of its connections for LISTEN, and uses the others to claim and finish. */
  readonly pool: Pool;
  readonly engines: EngineRegistry;
  readonly preflights?: readonly Preflight[];
  readonly safety?: SafetyChecker;
  readonly fetcher: ImageFetcher;
  readonly store: BlobStore;
  readonly publicUrl: string;
  readonly enqueueWebhook?: EnqueueWebhook;
  /**
   * Serve this enterprise server's tasks (and its owner's `any` pool); absent: the shared pool.
   * The engines' own servers (ComfyUI servers, by name) are served as server ids besides it.
   */
  readonly serverId?: string;
  /** Aborting it drains: no new claims, running tasks finish or are released (see drainMs). */
  readonly signal: AbortSignal;
  /** Tasks run at once by this worker (default: the engines' declared capacity, at least 1). */
  readonly concurrency?: number;
  /** Lease length; the worker renews it every third of it (default 30 s). */
  readonly leaseMs?: number;
  /**
   * How soon an engine's new progress is written when no lease renewal is due (default 500 ms):
   * status reads see progress at most this late, and a task costs at most one write per period.
   */
  readonly progressFlushMs?: number;
  /** Poll interval when no notification arrives (default 1 s): catches retries and lost NOTIFYs. */
  readonly pollMs?: number;
  /** On shutdown, how long running tasks may finish before being released (default 10 s). */
  readonly drainMs?: number;
  /** One attempt's longest run before it is aborted and retried (default 1 h). */
  readonly attemptTimeoutMs?: number;
  /** attemptTimeoutMs of the pipelines that have their own (TASK_MAX_RUN_SECONDS_BY_PIPELINE). */
  readonly attemptTimeoutsByPipeline?: Readonly<Record<string, number>>;
  /**
   * How many of one owner's tasks may run at once, by plan (PLAN_CONCURRENCY), across every
   * worker; a plan not named (or 0) has no cap. Default: no caps.
   */
  readonly planConcurrency?: Readonly<Record<string, number>>;
  /** Retry backoff base (default 1 s, doubled per attempt). */
  readonly retryBaseMs?: number;
  /** The request fields holding image URLs per pipeline (default: the contract's endpoint table). */
  readonly imageFields?: (pipeline: string) => readonly string[];
  /** Stable name of this worker in `lease_owner` (default host:pid:random). */
  readonly workerId?: string;
  /** Its lines about a task carry the task's id and request id as fields. */
  readonly log?: LineLog;
  /** Where it counts claims, outcomes and engine run times (default: not counted). */
  readonly metrics?: Metrics;
  /**
   * The language model that rewrites the prompt of a request with `enhance_prompt: true`
   * (PROMPT_ENHANCER_URL); absent: such a prompt is used as given, and the task's notes say so.
   */
  readonly promptEnhancer?: PromptEnhancer;
}

export interface Worker {
  readonly id: string;
  /** Resolves once the worker has stopped (after its signal aborted and it drained). */
  readonly stopped: Promise<void>;
  /** Resolves once its engines have started (models loaded) and it listens for tasks. */
  readonly ready: Promise<void>;
}
