import { readFile } from 'node:fs/promises';
import { type EngineJob, type InputImage, inMemoryImage, type RunContext } from '@imagegen/engines';
import { describe, expect, it } from 'vitest';
import { createSandboxEngine } from '../src/sandbox-engine.ts';
import {
  SANDBOX_MODEL_NOTE,
  SANDBOX_MODEL_TAG,
  SANDBOX_TRAINING_MAX_MS,
  SANDBOX_TRAINING_STEP_MS,
} from '../src/sandbox-training.ts';

const photo: InputImage = inMemoryImage(Buffer.alloc(0), {
  contentType: 'image/png',
  width: 8,
  height: 8,
  url: 'https://x/p.png',
});

function training(steps: number): EngineJob {
  return {
    pipeline: '/train_model/v1',
    input: { model_name: 'me', base_model: 'sd1.5', max_train_steps: steps, images: ['a', 'b'] },
    images: { images: [photo, photo] },
    seed: 1,
  };
}

function recorder(signal = new AbortController().signal) {
  const reports: { at: number; fraction: number; message?: string }[] = [];
  const started = Date.now();
  const ctx: RunContext = {
    signal,
    progress: (fraction, message) =>
      reports.push({ at: Date.now() - started, fraction, ...(message ? { message } : {}) }),
  };
  return { ctx, reports, elapsed: () => Date.now() - started };
}

describe('training on the sandbox engine', () => {
  it('stays silent while initialising, then reports progress step by step up to 1', async () => {
    const engine = createSandboxEngine({ training: { stepMs: 10 } });
    const { ctx, reports, elapsed } = recorder();
    await engine.run(training(40), ctx);
    // 40 steps at 10 ms: 400 ms, the first 20 % before any report (the status reads initialising).
    expect(reports[0]?.at).toBeGreaterThanOrEqual(75);
    expect(reports[0]).toMatchObject({ fraction: 1 / 40, message: 'sandbox training step 1 of 40' });
    expect(reports.at(-1)).toMatchObject({ fraction: 1, message: 'sandbox training step 40 of 40' });
    const fractions = reports.map((r) => r.fraction);
    expect(fractions).toEqual([...fractions].sort((a, b) => a - b));
    expect(reports.length).toBeGreaterThan(3);
    expect(elapsed()).toBeGreaterThanOrEqual(395);
  });

  it('takes time in proportion to max_train_steps, bounded by its maximum', async () => {
    const engine = createSandboxEngine({ training: { stepMs: 4, maxMs: 500 } });
    const short = recorder();
    await engine.run(training(25), short.ctx);
    const shortMs = short.elapsed();
    const long = recorder();
    await engine.run(training(300), long.ctx);
    const longMs = long.elapsed();
    expect(shortMs).toBeGreaterThanOrEqual(95);
    expect(shortMs).toBeLessThan(400);
    // 300 steps at 4 ms would be 1.2 s; the bound holds it to 0.5 s.
    expect(longMs).toBeGreaterThanOrEqual(495);
    expect(longMs).toBeLessThan(1_000);
  });

  it('answers no images and marks the model as a sandbox model, never a trained one', async () => {
    const result = await createSandboxEngine({ training: { stepMs: 1 } }).run(training(5), recorder().ctx);
    expect(result.images).toEqual([]);
    expect(result.meta).toMatchObject({
      engine: 'sandbox',
      sandbox: true,
      max_train_steps: 5,
      training_images: 2,
    });
    expect(result.model).toEqual({ tags: [SANDBOX_MODEL_TAG], descriptionNote: SANDBOX_MODEL_NOTE });
    expect(result.meta).not.toHaveProperty('model_tags');
    expect(result.meta).not.toHaveProperty('model_id');
    expect(SANDBOX_MODEL_NOTE).toContain('no weights were trained');
  });

  it('takes 20 ms a step by default, at most 6 s', async () => {
    const { ctx, elapsed } = recorder();
    await createSandboxEngine().run(training(10), ctx);
    expect(elapsed()).toBeGreaterThanOrEqual(195);
    expect(elapsed()).toBeLessThan(1_000);
  });

  it('stops as soon as the task is aborted', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('lease lost')), 100);
    const { ctx, elapsed } = recorder(controller.signal);
    await expect(createSandboxEngine().run(training(300), ctx)).rejects.toThrow('lease lost');
    expect(elapsed()).toBeLessThan(1_000);
  });
});

describe('the Train models docs page', () => {
  it('states the sandbox training’s step time, bound, tag and description note', async () => {
    const page = await readFile(
      new URL('../../docs/docs/Custom-upload/Train-models.mdx', import.meta.url),
      'utf8',
    );
    expect(page).toContain(`${SANDBOX_TRAINING_STEP_MS} ms per step`);
    expect(page).toContain(`at most ${SANDBOX_TRAINING_MAX_MS / 1000} s (300 steps)`);
    expect(page).toContain(`gain \`${SANDBOX_MODEL_TAG}\``);
    expect(page).toContain(`starts with \`${SANDBOX_MODEL_NOTE}\``);
  });
});
