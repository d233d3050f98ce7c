import { compileRequestValidator, endpointByPath } from '@imagegen/contract';
import { COMPILERS, createComfyClient, createComfyuiEngine } from '@imagegen/engine-comfyui/engine';
import type { Engine, EngineJob } from '@imagegen/engines';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeComfyUI, startFakeComfyUI } from '../src/fake-comfyui/index.ts';
import { backlogOverhead, historyStamps, type PromptTimes } from '../src/gateway-overhead.ts';

/**
 * What the gateway adds to a backlog, told apart from what the server adds, reproduced on the fake:
 * a ComfyUI that collects garbage after a prompt (main.py's `gc.collect()`, which holds Python's
 * lock) idles between two prompts with our next one already queued there, and, after the last
 * prompt, holds the download of its outputs: the same two figures a real server showed (one idle
 * gap per backlog, the last prompt's end to SUCCESS), both the server's own.
 */

const STEP_MS = 150;
const PAUSE_MS = 300;

let fake: FakeComfyUI | undefined;
let engine: Engine | undefined;
afterEach(async () => {
  await engine?.close?.();
  await fake?.close();
  engine = undefined;
  fake = undefined;
});

function job(): EngineJob {
  const checked = compileRequestValidator(endpointByPath('/sd/text2image/v1')!)({
    prompt: 'a fox',
    negative_prompt: '',
    width: 64,
    height: 64,
    num_inference_steps: 4,
  });
  if (!checked.ok) throw new Error(JSON.stringify(checked.detail));
  return {
    pipeline: '/sd/text2image/v1',
    input: checked.value as Record<string, unknown>,
    images: {},
    seed: 1,
  };
}

/** One fake (collecting garbage as told) and the engine over it. */
async function setUp(collection: { pauseMs: number; everyMs: number }) {
  fake = await startFakeComfyUI({ stepDelayMs: STEP_MS });
  fake.faults.collectGarbage(collection);
  engine = createComfyuiEngine({
    servers: [createComfyClient({ url: fake.url, name: 'gpu-a' })],
    compilers: COMPILERS,
    checkpoints: { 'sd1.5': 'random-sd15.safetensors' },
  });
  await engine.start!();
  return { fake, engine };
}

/** Runs `count` jobs, three at once as the worker does (two on the server, one prepared), each timed from both sides. */
async function backlog(engine: Engine, fake: FakeComfyUI, count: number): Promise<PromptTimes[]> {
  const results: { meta: Record<string, unknown>; succeededAt: number }[] = [];
  // Three in flight, a new one as each ends: two on the server, one prepared.
  let next = 0;
  const lane = async () => {
    while (next < count) {
      next += 1;
      const result = await engine.run(job(), { signal: AbortSignal.timeout(60_000), progress: () => {} });
      results.push({ meta: result.meta as Record<string, unknown>, succeededAt: Date.now() });
    }
  };
  await Promise.all([lane(), lane(), lane()]);
  return Promise.all(
    results.map(async ({ meta, succeededAt }) => ({
      promptId: String(meta.comfyui_prompt_id),
      ...(await historyStamps(fake.url, String(meta.comfyui_prompt_id))),
      submittedAt: Number(meta.comfyui_submitted_at),
      endSeenAt: Number(meta.comfyui_end_seen_at),
      outputsAt: Number(meta.comfyui_outputs_at),
      succeededAt,
    })),
  );
}

describe("the gateway's overhead on a backlog, apart from the server's", () => {
  it("takes an idle gap while the server collects garbage, with our next prompt queued there, for the server's own", async () => {
    // The first collection comes after the first prompt (main.py starts with none behind it).
    const { fake, engine } = await setUp({ pauseMs: PAUSE_MS, everyMs: 60_000 });
    const account = backlogOverhead(await backlog(engine, fake, 5));
    expect(account.prompts).toBe(5);
    // One collection, between the first two prompts: a gap at least the pause long, the server's.
    expect(account.server_gaps_ms.filter((gap) => gap >= PAUSE_MS - 1)).toHaveLength(1);
    expect(Math.max(...account.server_gaps_ms)).toBeGreaterThanOrEqual(PAUSE_MS - 1);
    expect(account.gateway_gaps_ms.filter((gap) => gap >= PAUSE_MS - 1)).toEqual([]);
    expect(fake.executions).toHaveLength(5);
  });

  it("finds the last prompt's end to SUCCESS held by the server when it collects after it: the download waited", async () => {
    // After every prompt: after the last one too.
    const { fake, engine } = await setUp({ pauseMs: PAUSE_MS, everyMs: 0 });
    const account = backlogOverhead(await backlog(engine, fake, 3));
    expect(account.last_end_to_success_ms).toBeGreaterThanOrEqual(PAUSE_MS - 1);
    // The end was seen at once; the outputs' download is what waited.
    expect(account.last_seen_to_outputs_ms).toBeGreaterThanOrEqual(PAUSE_MS - 1);
    expect(account.server_gaps_ms).toHaveLength(2);
  });
});
