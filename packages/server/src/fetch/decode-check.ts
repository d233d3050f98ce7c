import { availableParallelism } from 'node:os';
import { ChildStoppedError, ChildTimeoutError, ProcessPool } from '@imagegen/engines/threads';
import type { ImageHeader } from './image-header.ts';
import { MAX_IMAGE_PIXELS } from './image-header.ts';
import { SHARP_FORMAT } from './image-sniff.ts';
import { InputFetchError } from './input-fetch-error.ts';

/**
 * The one full decode an input image gets, proving it whole (a truncated or corrupt file fails
 * here rather than inside an engine), run in decode processes of their own (decode-check-process.ts):
 * libvips' work runs on the libuv thread pool of the process that asks for it, the pool this
 * process's file reads and DNS lookups share, so four large decodes here once held every
 * `GET /files/...` for seconds. A process of its own also gives its memory back when it leaves,
 * and can be stopped at once when the task that asked is cancelled.
 *
 * Its cost is bounded before it starts (the header's limits, image-header.ts; a JPEG's scans,
 * jpeg-scans.ts) and while it runs: past DECODE_TIMEOUT_MS the image is refused.
 */
export interface DecodeCheckRequest {
  /** A file's path, or the bytes themselves. */
  readonly source: string | Uint8Array;
  readonly format: string;
  readonly maxPixels: number;
  /** Its width × height, from its header. */
  readonly pixels: number;
}

/** A generous bound: a 50-megapixel PNG decodes in 1-2 s on one core. */
export const DECODE_TIMEOUT_MS = 60_000;

/** Decodes at once: up to half the cores (each decode process uses one), at most four. */
const PROCESSES = Math.max(1, Math.min(4, Math.ceil(availableParallelism() / 2)));
/** An idle decode process leaves after this long, and its memory with it; one stays, warm. */
const IDLE_MS = 10_000;
/**
 * A decode process that decoded more than this leaves once it answers: the memory a large image
 * took (a progressive JPEG or an interlaced PNG is held whole) goes back with it.
 */
const RETIRE_PIXELS = 10_000_000;

let pool: ProcessPool<DecodeCheckRequest, true> | undefined;

function decodePool(): ProcessPool<DecodeCheckRequest, true> {
  pool ??= new ProcessPool(new URL('./decode-check-process.ts', import.meta.url), {
    size: PROCESSES,
    idleMs: IDLE_MS,
    warm: 1,
    retire: (request) => request.pixels > RETIRE_PIXELS,
  });
  return pool;
}

/**
 * Starts a decode process ahead of the first image, so that image does not wait for a process to
 * start (half a second to a second from the sources): the worker and the API call it as they start.
 */
export function warmDecodeChecks(): void {
  decodePool().warmUp();
}

/**
 * Decodes the image once, whole, in a decode process; throws InputFetchError naming the field
 * when it is not whole or costs too much, and the signal's reason when it aborts (the decode is
 * stopped with its process).
 */
export async function checkDecodes(
  source: string | Buffer,
  header: ImageHeader,
  field: string,
  signal?: AbortSignal,
): Promise<void> {
  try {
    await decodePool().run(
      {
        source,
        format: SHARP_FORMAT[header.contentType],
        maxPixels: MAX_IMAGE_PIXELS,
        pixels: header.width * header.height,
      },
      { timeoutMs: DECODE_TIMEOUT_MS, ...(signal ? { signal } : {}) },
    );
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    if (error instanceof ChildTimeoutError) {
      throw new InputFetchError(field, `decoding the image took longer than ${DECODE_TIMEOUT_MS / 1000} s`);
    }
    if (error instanceof ChildStoppedError) {
      throw new InputFetchError(field, 'the image could not be decoded (its decoder stopped)');
    }
    throw new InputFetchError(field, (error as Error).message);
  }
}

/** Stops the decode processes (tests that count processes; a process exits without it). */
export async function closeDecodeChecks(): Promise<void> {
  const closing = pool;
  pool = undefined;
  await closing?.close();
}
