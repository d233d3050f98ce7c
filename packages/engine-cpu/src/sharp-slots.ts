/**
 * sharp runs each operation (a decode, a resize, an encode) on a thread of libuv's pool: four
 * threads by default (UV_THREADPOOL_SIZE), the same ones that read files for `GET /files/...` and
 * resolve names for the API and the worker in this process. The engine takes as many jobs at once
 * as it has cores, so its image operations could hold every one of them for seconds; here at most
 * half the pool's threads work for it at once, and the process's file reads always find one free.
 */
const SLOTS = Math.max(1, Math.floor((Number(process.env.UV_THREADPOOL_SIZE) || 4) / 2));

let busy = 0;
const waiting: (() => void)[] = [];

/** Runs one sharp operation (a pipeline up to its `toBuffer()` or `stats()`) when a slot is free. */
export async function withSharpSlot<T>(operation: () => Promise<T>): Promise<T> {
  if (busy >= SLOTS) await new Promise<void>((resolve) => waiting.push(resolve));
  busy++;
  try {
    return await operation();
  } finally {
    busy--;
    waiting.shift()?.();
  }
}
