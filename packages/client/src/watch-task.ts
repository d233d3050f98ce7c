import { ApiError, NetworkError } from './errors.ts';
import { readEventStream } from './event-stream.ts';
import { sleep } from './sleep.ts';
import { hasEnded } from './task-states.ts';
import { send, sendForJson, type Transport } from './transport.ts';
import type { AnyStatus, TaskPreview } from './types.ts';

/**
 * Every status of a task until its final one: from `GET <status path>/events` (Server-Sent
 * Events) when the API offers it, reconnecting with Last-Event-ID when the connection drops;
 * otherwise, or after repeated drops, by polling the status path with a growing interval.
 */

export interface WatchOptions {
  readonly signal?: AbortSignal | undefined;
  /** The first wait between two polls, when the API offers no status stream (default 1000 ms). */
  readonly pollIntervalMs?: number | undefined;
  /**
   * Asks the status stream for the task's previews too (`?previews=true`): called with each, the
   * picture as it forms, where the engine sends them. Polling has none.
   */
  readonly onPreview?: ((preview: TaskPreview) => void) | undefined;
}

const DEFAULT_POLL_MS = 1000;
/** Polls slow down by this factor each time, up to ten seconds (or pollIntervalMs, if longer). */
const POLL_GROWTH = 1.5;
const MAX_POLL_MS = 10_000;
/** The stream's own `retry` replaces this reconnection delay when it sends one. */
const DEFAULT_RECONNECT_MS = 1000;
/** After this many drops in a row without an event, the client polls instead. */
const MAX_STREAM_DROPS = 3;
/**
 * A stream silent this long (the API sends a keep-alive every 15 s) is taken for dead, as a
 * connection a proxy or a sleeping laptop cut without closing it would be.
 */
const STALLED_MS = 45_000;

type StreamEnd = 'ended' | 'dropped' | 'poll';

export function statusPathOf(taskPath: string, id: string): string {
  return `${taskPath}/status/${encodeURIComponent(id)}`;
}

export async function* watchTask(
  transport: Transport,
  taskPath: string,
  id: string,
  options: WatchOptions = {},
): AsyncGenerator<AnyStatus, void, undefined> {
  const statusPath = statusPathOf(taskPath, id);
  const state = { lastEventId: undefined as string | undefined, reconnectMs: DEFAULT_RECONNECT_MS };
  for (let drops = 0; drops < MAX_STREAM_DROPS; ) {
    const before = state.lastEventId;
    const end = yield* streamOnce(transport, statusPath, state, options);
    if (end === 'ended') return;
    if (end === 'poll') break;
    drops = state.lastEventId === before ? drops + 1 : 0;
    await sleep(state.reconnectMs, options.signal);
  }
  const first = options.pollIntervalMs ?? DEFAULT_POLL_MS;
  const longest = Math.max(first, MAX_POLL_MS);
  for (let interval = first; ; interval = Math.min(interval * POLL_GROWTH, longest)) {
    const status = await sendForJson<AnyStatus>(transport, {
      method: 'GET',
      path: statusPath,
      signal: options.signal,
      retry: true,
    });
    yield status;
    if (hasEnded(status)) return;
    await sleep(interval, options.signal);
  }
}

/** One connection to the status stream: yields its statuses, says how it ended. */
async function* streamOnce(
  transport: Transport,
  statusPath: string,
  state: { lastEventId: string | undefined; reconnectMs: number },
  { signal, onPreview }: WatchOptions,
): AsyncGenerator<AnyStatus, StreamEnd, undefined> {
  const connection = new AbortController();
  let stalled: ReturnType<typeof setTimeout> | undefined;
  const alive = () => {
    clearTimeout(stalled);
    stalled = setTimeout(() => connection.abort(), STALLED_MS);
  };
  try {
    alive();
    let response: Response;
    try {
      response = await send(transport, {
        method: 'GET',
        path: `${statusPath}/events${onPreview ? '?previews=true' : ''}`,
        headers: {
          accept: 'text/event-stream',
          ...(state.lastEventId === undefined ? {} : { 'last-event-id': state.lastEventId }),
        },
        signal: signal ? AbortSignal.any([signal, connection.signal]) : connection.signal,
        retry: false,
      });
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (error instanceof NetworkError || connection.signal.aborted) return 'dropped';
      // No stream for this path (an API without them), or an unknown task: the status path tells
      // which, and answers 404 itself for the latter.
      if (error instanceof ApiError && (error.status === 404 || error.status === 405)) return 'poll';
      throw error;
    }
    // 204: the final event was already received once; anything but a stream: no stream here.
    const type = response.headers.get('content-type') ?? '';
    if (response.status === 204 || !response.body || !type.startsWith('text/event-stream')) {
      await response.body?.cancel();
      return 'poll';
    }
    const events = readEventStream(response.body, {
      onActivity: alive,
      onRetry: (ms) => {
        state.reconnectMs = ms;
      },
    });
    try {
      for await (const event of events) {
        if (event.event === 'preview') onPreview?.(JSON.parse(event.data) as TaskPreview);
        // Statuses are the stream's unnamed events; any other kind is not one.
        if (event.event !== 'message') continue;
        if (event.id !== undefined) state.lastEventId = event.id;
        const status = JSON.parse(event.data) as AnyStatus;
        yield status;
        if (hasEnded(status)) return 'ended';
      }
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (error instanceof SyntaxError) throw error;
    }
    return 'dropped';
  } finally {
    clearTimeout(stalled);
    connection.abort();
  }
}
