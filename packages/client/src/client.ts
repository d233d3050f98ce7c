import type { CheckedQueryOf, CheckedRequestOf } from './bounds-check.ts';
import { type Deadline, startDeadline } from './deadline.ts';
import { ApiError, NetworkError, TaskFailedError, TimeoutError } from './errors.ts';
import { newIdempotencyKey } from './idempotency-key.ts';
import { hasFailed, hasSucceeded } from './task-states.ts';
import { type Exchange, sendForJson, type Transport } from './transport.ts';
import type {
  AcceptedOf,
  AnyStatus,
  DeletedModelAnswer,
  FailureOf,
  ParamsOf,
  PendingOf,
  QueryOf,
  ReadAnswerOf,
  ReadPath,
  StatusOf,
  SuccessOf,
  TaskList,
  TaskListEntry,
  TaskListQuery,
  TaskPath,
  TaskPreview,
  UploadAnswer,
  UsageQuery,
  UsageReport,
  WebhookDelivery,
  WebhookDeliveryList,
  WebhookDeliveryQuery,
} from './types.ts';
import { statusPathOf, type WatchOptions, watchTask } from './watch-task.ts';

export interface ClientOptions {
  /** The key sent in `API-Key`. Default: the `IMAGEGEN_API_KEY` environment variable, where there is one. */
  readonly apiKey?: string | undefined;
  /** The API's address. Default: `IMAGEGEN_BASE_URL`, else `http://localhost:8000`. */
  readonly baseUrl?: string | undefined;
  /** The fetch to use (default: the runtime's own). */
  readonly fetch?: typeof globalThis.fetch;
  /**
   * How many times a request that got no answer, or a 429, 502, 503 or 504, is sent again: reads,
   * and submissions (their Idempotency-Key makes a second one answer the first task). Default 3.
   */
  readonly retries?: number;
  /** The wait before the first retry, doubling each time (default 500 ms). */
  readonly retryDelayMs?: number;
}

/**
 * A task's deadline as the `Cancel-After` header writes it: whole numbers with the units h, m, s,
 * ms, largest first (`30s`, `5m`, `1h30m`, `1s500ms`), from 1s to 24h. The API refuses anything
 * else with a ValidationError at `["header", "cancel-after"]`.
 */
export type CancelAfter = `${number}${'h' | 'm' | 's' | 'ms'}${string}`;

export interface SubmitOptions {
  /** Default: a new random key per submission, the same on each of its retries. */
  readonly idempotencyKey?: string;
  /**
   * The task's deadline, counted from its submission: past it the task fails with
   * `the task's deadline (Cancel-After: 30s) passed`, never run if it still waited, stopped if it
   * ran. Default: none.
   */
  readonly cancelAfter?: CancelAfter;
  readonly signal?: AbortSignal;
}

export interface WaitOptions<P extends TaskPath> {
  /** Aborting it rejects with its reason (and cancels the task with `cancelOnAbort`). */
  readonly signal?: AbortSignal;
  /** The deadline: past it the call rejects with a TimeoutError (and cancels with `cancelOnTimeout`). */
  readonly timeoutMs?: number;
  /** Called with every status read before the final one: progress, queue position, estimate. */
  readonly onProgress?: (status: PendingOf<P>) => void;
  /**
   * Called with each preview of the task, the picture as it forms (JPEG, base64), where its engine
   * sends them (ComfyUI started with a preview method): asks the status stream for them.
   */
  readonly onPreview?: (preview: TaskPreview) => void;
  /** The first interval between polls when the API offers no status stream (default 1000 ms). */
  readonly pollIntervalMs?: number;
  /** Cancel the task when the deadline passes (default false: it goes on without you). */
  readonly cancelOnTimeout?: boolean;
  /** Cancel the task when `signal` aborts (default false). */
  readonly cancelOnAbort?: boolean;
}

export interface RunOptions<P extends TaskPath> extends WaitOptions<P> {
  /** Default: a new random key, the same on each retry of the submission. */
  readonly idempotencyKey?: string;
  /**
   * The task's deadline on the API (`Cancel-After`; see SubmitOptions). Unlike `timeoutMs`, which
   * only stops this call waiting, it ends the task itself, even when nobody waits for it.
   */
  readonly cancelAfter?: CancelAfter;
}

type HasParams<P extends string> = P extends `${string}{${string}}${string}` ? true : false;

export type ReadOptions<P extends ReadPath> = { readonly signal?: AbortSignal } & (HasParams<P> extends true
  ? { readonly params: ParamsOf<P> }
  : unknown) &
  ([QueryOf<P>] extends [never] ? unknown : { readonly query?: QueryOf<P> });

type ReadArguments<P extends ReadPath> =
  HasParams<P> extends true ? [options: ReadOptions<P>] : [options?: ReadOptions<P>];

/** A file to upload: a Blob (a browser File keeps its name), or bytes with a name. */
export type UploadFile =
  | Blob
  | { readonly name: string; readonly data: Blob | ArrayBuffer | Uint8Array; readonly type?: string };

/** The API takes at most this many images per upload; longer lists go in several. */
const UPLOAD_BATCH = 16;
/** How long a cancel after a deadline or an abort may take before the client gives up on it. */
const CANCEL_TIMEOUT_MS = 10_000;

/**
 * The imagegen API, typed from its contract. Each path is one typed call: the pipelines through
 * `submit`, `status`, `cancel`, `watch`, `wait` and `run`; the reads through `get` (and the
 * `tasks`, `models` shortcuts); uploads through `uploadImages`.
 */
export interface ImagegenClient {
  readonly baseUrl: string;
  /**
   * Queues a task; answers `{status: "PENDING", id}` (training: `{id, status: "queued"}`). The body
   * is checked as `CheckedRequestOf` says, number literals against their bounds too; `B` is inferred
   * from it (its default serves a call that names only `P`, whose body then goes unchecked).
   */
  // biome-ignore lint/suspicious/noExplicitAny: the one default every constraint accepts (see submit)
  submit<P extends TaskPath, const B extends CheckedRequestOf<P, B> = any>(
    path: P,
    body: B,
    options?: SubmitOptions,
  ): Promise<AcceptedOf<P>>;
  /** The task's status now. */
  status<P extends TaskPath>(path: P, id: string, options?: { signal?: AbortSignal }): Promise<StatusOf<P>>;
  /** Ends a queued or running task; answers its final status. A task that already ended: ApiError 409. */
  cancel<P extends TaskPath>(path: P, id: string, options?: { signal?: AbortSignal }): Promise<FailureOf<P>>;
  /** Every status of the task as it changes, the final one last. */
  watch<P extends TaskPath>(
    path: P,
    id: string,
    options?: { signal?: AbortSignal; pollIntervalMs?: number },
  ): AsyncGenerator<StatusOf<P>, void, undefined>;
  /** Follows a task to its end: its success status, or a TaskFailedError. */
  wait<P extends TaskPath>(path: P, id: string, options?: WaitOptions<P>): Promise<SuccessOf<P>>;
  /** Submits and follows the task to its end: its success status, or a typed error. */
  // biome-ignore lint/suspicious/noExplicitAny: the one default every constraint accepts (see submit)
  run<P extends TaskPath, const B extends CheckedRequestOf<P, B> = any>(
    path: P,
    body: B,
    options?: RunOptions<P>,
  ): Promise<SuccessOf<P>>;
  /** A read of the owner's records, e.g. `get('/models/v1/{model_id}', { params: { model_id } })`. */
  get<P extends ReadPath>(path: P, ...options: ReadArguments<P>): Promise<ReadAnswerOf<P>>;
  /** One page of your tasks, newest first (a `limit` literal out of its bounds fails to compile). */
  tasks<const Q extends CheckedQueryOf<'/tasks/v1', Q> = TaskListQuery>(
    query?: Q,
    options?: { signal?: AbortSignal },
  ): Promise<TaskList>;
  /** Every task that matches `query`, page after page. */
  allTasks<
    const Q extends CheckedQueryOf<'/tasks/v1', Q, Omit<TaskListQuery, 'cursor'>> = Omit<
      TaskListQuery,
      'cursor'
    >,
  >(query?: Q, options?: { signal?: AbortSignal }): AsyncGenerator<TaskListEntry>;
  /** Your models. */
  models(options?: { signal?: AbortSignal }): Promise<ReadAnswerOf<'/models/v1'>>;
  /**
   * Deletes one of your models and its files (`DELETE /models/v1/{model_id}`). Another account's
   * or a missing model: ApiError 404; one still loading or named by a task not ended: ApiError 409.
   */
  deleteModel(modelId: string, options?: { signal?: AbortSignal }): Promise<DeletedModelAnswer>;
  /**
   * Your webhook calls, newest first, each with its event, status and attempts
   * (`GET /webhooks/v1/deliveries`); `task_id` keeps one task's.
   */
  deliveries<const Q extends CheckedQueryOf<'/webhooks/v1/deliveries', Q> = WebhookDeliveryQuery>(
    query?: Q,
    options?: { signal?: AbortSignal },
  ): Promise<WebhookDeliveryList>;
  /**
   * Sends a delivered or failed webhook call again, as a new attempt; answers it, pending. Another
   * account's or a missing one: ApiError 404; one still pending: ApiError 409.
   */
  redeliver(deliveryId: string, options?: { signal?: AbortSignal }): Promise<WebhookDelivery>;
  /** Your finished tasks by UTC day and pipeline (`GET /usage/v1`; default: the last 30 days). */
  usage(query?: UsageQuery, options?: { signal?: AbortSignal }): Promise<UsageReport>;
  /** Uploads images (`POST /upload_images`); answers their URLs, in order, to use as inputs. */
  uploadImages(files: readonly UploadFile[], options?: { signal?: AbortSignal }): Promise<string[]>;
  /** The bytes behind an output link (`download_urls`). */
  download(url: string, options?: { signal?: AbortSignal }): Promise<Uint8Array>;
}

function environment(name: string): string | undefined {
  const process = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  return process?.env?.[name] || undefined;
}

/** The options of `wait` and `run` as the untyped calls below read them. */
interface LooseWaitOptions extends Omit<RunOptions<TaskPath>, 'onProgress'> {
  readonly onProgress?: (status: AnyStatus) => void;
}

interface LooseReadOptions {
  readonly signal?: AbortSignal;
  readonly params?: Readonly<Record<string, string>>;
  readonly query?: Readonly<Record<string, string | number | undefined>>;
}

export function createClient(options: ClientOptions = {}): ImagegenClient {
  const transport: Transport = {
    baseUrl: options.baseUrl ?? environment('IMAGEGEN_BASE_URL') ?? 'http://localhost:8000',
    apiKey: options.apiKey ?? environment('IMAGEGEN_API_KEY'),
    fetch: options.fetch ?? globalThis.fetch.bind(globalThis),
    retries: options.retries ?? 3,
    retryDelayMs: options.retryDelayMs ?? 500,
  };
  // The calls are written over plain strings and JSON, and given their per-path types once, at
  // the end: checking each generic signature against its body for every path of the contract
  // costs the compiler millions of type instantiations and proves nothing the tests do not.
  return untypedClient(transport) as unknown as ImagegenClient;
}

function untypedClient(transport: Transport) {
  const json = <T>(exchange: Exchange) => sendForJson<T>(transport, exchange);

  const submit = (path: string, body: unknown, submitOptions: SubmitOptions = {}) =>
    json<{ id: string }>({
      method: 'POST',
      path,
      json: body,
      headers: {
        'idempotency-key': submitOptions.idempotencyKey ?? newIdempotencyKey(),
        ...(submitOptions.cancelAfter !== undefined ? { 'cancel-after': submitOptions.cancelAfter } : {}),
      },
      signal: submitOptions.signal,
      retry: true,
    });

  const cancel = (path: string, id: string, cancelOptions: { signal?: AbortSignal } = {}) =>
    json<AnyStatus>({
      method: 'POST',
      path: `${path}/cancel/${encodeURIComponent(id)}`,
      signal: cancelOptions.signal,
      retry: false,
    });

  /** Reads statuses until the final one, under the deadline's signal. */
  const follow = async (path: string, id: string, deadline: Deadline, waitOptions: LooseWaitOptions) => {
    const statuses = watchTask(transport, path, id, {
      signal: deadline.signal,
      pollIntervalMs: waitOptions.pollIntervalMs,
      onPreview: waitOptions.onPreview,
    });
    for await (const status of statuses) {
      if (hasSucceeded(status)) return status;
      if (hasFailed(status)) throw new TaskFailedError(id, status);
      waitOptions.onProgress?.(status);
    }
    throw new Error(`the status of task ${id} ended without a final status`);
  };

  /** Cancels after a deadline or an abort; true when the task was cancelled by this call. */
  const cancelQuietly = async (path: string, id: string): Promise<boolean> => {
    try {
      await cancel(path, id, { signal: AbortSignal.timeout(CANCEL_TIMEOUT_MS) });
      return true;
    } catch {
      // It ended meanwhile (409), or the API could not be reached: the caller's error says enough.
      return false;
    }
  };

  /** `work` under the run's deadline; a timeout or an abort cancels the task when asked. */
  const underDeadline = async (
    path: string,
    waitOptions: LooseWaitOptions,
    work: (deadline: Deadline, taskId: (id: string) => void) => Promise<AnyStatus>,
  ): Promise<AnyStatus> => {
    const deadline = startDeadline(waitOptions.signal, waitOptions.timeoutMs);
    let id: string | undefined;
    try {
      return await work(deadline, (known) => {
        id = known;
      });
    } catch (error) {
      if (deadline.timedOut) {
        const cancelled =
          id !== undefined && waitOptions.cancelOnTimeout === true && (await cancelQuietly(path, id));
        throw new TimeoutError(id, waitOptions.timeoutMs ?? 0, cancelled);
      }
      if (waitOptions.signal?.aborted && id !== undefined && waitOptions.cancelOnAbort) {
        await cancelQuietly(path, id);
      }
      throw error;
    } finally {
      deadline.dispose();
    }
  };

  const get = <T>(path: string, readOptions: LooseReadOptions = {}) => {
    const filled = path.replace(/\{(\w+)\}/g, (_, name: string) => {
      const value = readOptions.params?.[name];
      if (value === undefined) throw new TypeError(`${path}: the parameter ${name} is missing`);
      // The API reads `/models/v1/` as the list's path with a trailing slash and redirects there.
      if (value === '') throw new TypeError(`${path}: the parameter ${name} is empty`);
      return encodeURIComponent(value);
    });
    return json<T>({
      method: 'GET',
      path: filled,
      ...(readOptions.query ? { query: readOptions.query } : {}),
      signal: readOptions.signal,
      retry: true,
    });
  };

  const tasks = (query: TaskListQuery = {}, readOptions: { signal?: AbortSignal } = {}) =>
    get<TaskList>('/tasks/v1', { query, ...readOptions });

  return {
    baseUrl: transport.baseUrl,
    submit,
    status: (path: string, id: string, statusOptions: { signal?: AbortSignal } = {}) =>
      json<AnyStatus>({
        method: 'GET',
        path: statusPathOf(path, id),
        signal: statusOptions.signal,
        retry: true,
      }),
    cancel,
    watch: (path: string, id: string, watchOptions: WatchOptions = {}) =>
      watchTask(transport, path, id, watchOptions),
    wait: (path: string, id: string, waitOptions: LooseWaitOptions = {}) =>
      underDeadline(path, waitOptions, (deadline, taskId) => {
        taskId(id);
        return follow(path, id, deadline, waitOptions);
      }),
    run: (path: string, body: unknown, runOptions: LooseWaitOptions = {}) =>
      underDeadline(path, runOptions, async (deadline, taskId) => {
        const { id } = await submit(path, body, {
          ...(runOptions.idempotencyKey ? { idempotencyKey: runOptions.idempotencyKey } : {}),
          ...(runOptions.cancelAfter !== undefined ? { cancelAfter: runOptions.cancelAfter } : {}),
          signal: deadline.signal,
        });
        taskId(id);
        return follow(path, id, deadline, runOptions);
      }),
    get,
    tasks,
    async *allTasks(query: TaskListQuery = {}, readOptions: { signal?: AbortSignal } = {}) {
      let cursor: string | null | undefined;
      do {
        const page = await tasks({ ...query, ...(cursor ? { cursor } : {}) }, readOptions);
        yield* page.tasks;
        cursor = page.next_cursor;
      } while (cursor);
    },
    models: (readOptions: { signal?: AbortSignal } = {}) => get('/models/v1', readOptions),
    deleteModel: (modelId: string, deleteOptions: { signal?: AbortSignal } = {}) =>
      json<DeletedModelAnswer>({
        method: 'DELETE',
        path: `/models/v1/${encodeURIComponent(modelId)}`,
        signal: deleteOptions.signal,
        // Deleting twice answers 404 the second time: safe to send again when no answer came.
        retry: true,
      }),
    deliveries: (query: WebhookDeliveryQuery = {}, readOptions: { signal?: AbortSignal } = {}) =>
      get<WebhookDeliveryList>('/webhooks/v1/deliveries', { query, ...readOptions }),
    redeliver: (deliveryId: string, redeliverOptions: { signal?: AbortSignal } = {}) =>
      json<WebhookDelivery>({
        method: 'POST',
        path: `/webhooks/v1/deliveries/${encodeURIComponent(deliveryId)}/redeliver`,
        signal: redeliverOptions.signal,
        // A second redelivery of one not yet attempted answers 409: not sent again by itself.
        retry: false,
      }),
    usage: (query: UsageQuery = {}, readOptions: { signal?: AbortSignal } = {}) =>
      get<UsageReport>('/usage/v1', { query, ...readOptions }),
    async uploadImages(files: readonly UploadFile[], uploadOptions: { signal?: AbortSignal } = {}) {
      const urls: string[] = [];
      for (let start = 0; start < files.length; start += UPLOAD_BATCH) {
        const form = new FormData();
        files.slice(start, start + UPLOAD_BATCH).forEach((file, n) => {
          const [blob, name] = blobOf(file, `image-${start + n + 1}`);
          form.append('image_files', blob, name);
        });
        const answer = await json<UploadAnswer>({
          method: 'POST',
          path: '/upload_images',
          form,
          signal: uploadOptions.signal,
          retry: false,
        });
        urls.push(...answer.image_urls);
      }
      return urls;
    },
    async download(url: string, downloadOptions: { signal?: AbortSignal } = {}) {
      // Output links carry their own credential (an unguessable key): the API key stays home.
      let response: Response;
      try {
        response = await transport.fetch(
          url,
          downloadOptions.signal ? { signal: downloadOptions.signal } : {},
        );
      } catch (error) {
        if (downloadOptions.signal?.aborted) throw downloadOptions.signal.reason;
        throw new NetworkError(`GET ${url}`, { cause: error });
      }
      if (!response.ok) {
        await response.body?.cancel();
        throw new ApiError(response.status, `could not download ${url}`, `GET ${url}`);
      }
      return new Uint8Array(await response.arrayBuffer());
    },
  };
}

function blobOf(file: UploadFile, fallbackName: string): [Blob, string] {
  if (file instanceof Blob) {
    const name = (file as { name?: unknown }).name;
    return [file, typeof name === 'string' && name !== '' ? name : fallbackName];
  }
  const data = file.data instanceof Blob ? file.data : new Blob([file.data as BlobPart]);
  return [file.type ? new Blob([data], { type: file.type }) : data, file.name];
}
