import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startThread } from '@imagegen/engines/threads';
import * as ort from 'onnxruntime-node';

/**
 * ISNet's onnxruntime session, built to hold as little memory as it can at full speed (figures
 * for the 1024 px graph, resident memory of the process):
 *
 * - The graph is optimized once, at level `all`, and saved to a temporary folder with its weights
 *   in a file of their own (isnet-graph.ts, on a short-lived thread); the session then loads that
 *   saved graph with no further optimization.
 *   A session optimized in place keeps about 430 MB (the weights before and after onnxruntime lays
 *   them out for its x86 kernels); one loaded from the saved graph maps the 176 MB weights file into
 *   memory and runs at the same speed. The folder is deleted as soon as the session holds the
 *   mapping (Linux keeps a deleted file's mapped pages), and the saved graph is used by this
 *   process only, so its machine-specific layout is never run elsewhere.
 * - The CPU arena stays on: a run then reuses the memory of the previous one, where releasing it
 *   after each run cost about 9% per run in page faults. Memory patterns are off: with them the
 *   arena keeps the first run's allocations and the planned block of the later runs (about
 *   1070 MB after two runs); without them it keeps one run's worth (about 640 MB) at the same CPU
 *   time, and the session is warm after one run instead of two.
 */
export async function createIsnetSession(): Promise<ort.InferenceSession> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'imagegen-isnet-'));
  try {
    await writeOptimizedGraph(dir);
    return await ort.InferenceSession.create(path.join(dir, 'isnet.onnx'), {
      graphOptimizationLevel: 'disabled',
      enableMemPattern: false,
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Runs isnet-graph.ts on a thread of its own and waits for it to end. */
async function writeOptimizedGraph(dir: string): Promise<void> {
  const worker = startThread(new URL('./isnet-graph.ts', import.meta.url), { dir });
  const [code] = (await once(worker, 'exit')) as [number];
  if (code !== 0) throw new Error(`preparing ISNet's graph failed (thread exit code ${code})`);
}
