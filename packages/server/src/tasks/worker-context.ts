import { endpointByPath } from '@imagegen/contract';
import type { LineLog, LogFields } from '../observability/logger.ts';
import type { TaskRecord, WorkerOptions } from './types.ts';

/** One attempt's longest run when no setting says otherwise (TASK_MAX_RUN_SECONDS). */
export const DEFAULT_ATTEMPT_TIMEOUT_MS = 60 * 60_000;

/** The worker's options with every default filled: what its parts (claim loop, lease, run, settle) read. */
export interface WorkerContext extends WorkerOptions {
  /** This worker's name; each claim's lease owner starts with it. */
  readonly id: string;
  readonly leaseMs: number;
  readonly progressFlushMs: number;
  readonly concurrency: number;
  readonly pollMs: number;
  readonly drainMs: number;
  readonly attemptTimeoutMs: number;
  readonly retryBaseMs: number;
  readonly imageFields: (pipeline: string) => readonly string[];
  readonly log: LineLog;
}

export function workerContext(id: string, options: WorkerOptions): WorkerContext {
  return {
    ...options,
    id,
    leaseMs: options.leaseMs ?? 30_000,
    progressFlushMs: options.progressFlushMs ?? 500,
    // Enough attempts at once to keep the engines' servers busy, unless the operator says otherwise.
    concurrency: Math.max(1, options.concurrency ?? options.engines.capacity()),
    pollMs: options.pollMs ?? 1_000,
    drainMs: options.drainMs ?? 10_000,
    attemptTimeoutMs: options.attemptTimeoutMs ?? DEFAULT_ATTEMPT_TIMEOUT_MS,
    retryBaseMs: options.retryBaseMs ?? 1_000,
    imageFields: options.imageFields ?? contractImageFields,
    log: options.log ?? (() => {}),
  };
}

/** The request fields that hold image URLs, from the contract's endpoint table. */
function contractImageFields(pipeline: string): readonly string[] {
  return endpointByPath(pipeline)?.imageFields ?? [];
}

/** The labels of a task's series: its pipeline and the engine that serves it here. */
export function taskLabels(ctx: WorkerContext, task: TaskRecord): { pipeline: string; engine: string } {
  return { pipeline: task.endpoint, engine: ctx.engines.engineFor(task.endpoint)?.name ?? 'none' };
}

/** The fields of a log line about a task: the same request id as its submission's lines. */
export function taskFields(task: TaskRecord, level?: LogFields['level']): LogFields {
  return {
    ...(level ? { level } : {}),
    taskId: task.id,
    requestId: task.requestId ?? null,
    pipeline: task.endpoint,
    attempt: task.attempts,
  };
}
