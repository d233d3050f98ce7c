import type { ApiPrompt, ObjectInfo } from '@imagegen/engine-comfyui/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  caseJob,
  choiceVariants,
  compileCase,
  condense,
  type FakeComfyUI,
  modelFilesOf,
  startFakeComfyUI,
  validatePrompt,
  validateSuite,
} from '../src/index.ts';
import { CHECKPOINTS, pick, startSuiteFake } from './suite-fake.ts';

/**
 * The suite's validation-only mode (`run.sh --validate-only`) against a fake that validates as
 * POST /prompt does and lacks a node class: each graph is accepted or rejected in the server's
 * words, and an accepted one is taken back before it computes anything.
 */

let fake: FakeComfyUI;

beforeAll(async () => {
  // A sampler step of a minute: a prompt that got to its sampler would still be there when taken back.
  fake = await startSuiteFake(undefined, { stepDelayMs: 60_000 });
});
afterAll(() => fake?.close());

describe('the pipeline suite, validated only', () => {
  it('answers accepted or rejected in the server’s words, and computes nothing', async () => {
    const t2i = pick('/sd/text2image/v1');
    const outcomes = await validateSuite(fake.url, {
      checkpoints: CHECKPOINTS,
      cases: [
        t2i,
        pick('/sd/controlnet/v1'),
        pick('/sd/text2image/v1 with LCMScheduler'),
        { ...t2i, name: 'a sampler no server has', body: { ...t2i.body, scheduler: 'LCMScheduler' } },
        pick('/sd/image2image/v1'),
      ],
    });
    expect(outcomes.map(({ name, outcome }) => [name, outcome])).toEqual([
      ['/sd/text2image/v1', 'accepted'],
      ['/sd/controlnet/v1', 'rejected'],
      ['/sd/text2image/v1 with LCMScheduler', 'skipped'],
      ['a sampler no server has', 'skipped'],
      ['/sd/image2image/v1', 'accepted'],
    ]);
    expect(outcomes[1]!.detail).toBe(
      "400: invalid_prompt: Cannot execute because node Canny does not exist.: Node ID '#5'",
    );
    expect(outcomes[2]!.detail).toBe('COMFYUI_CHECKPOINTS maps no sd1.5:lcm');
    expect(outcomes[3]!.detail).toMatch(/^not compiled: scheduler: LCMScheduler samples with the LCM LoRA/);
    for (const accepted of [outcomes[0]!, outcomes[4]!]) {
      expect(accepted.detail).toMatch(/^(removed from the queue before it started|interrupted .+)$/);
    }
    // Nothing ran to its end, and the queue holds nothing of ours.
    expect(fake.executions.filter((run) => run.status !== 'interrupted')).toEqual([]);
    const queue = (await (await fetch(`${fake.url}/queue`)).json()) as Record<string, unknown[]>;
    expect([...queue.queue_running!, ...queue.queue_pending!]).toEqual([]);
  });

  it('condenses a rejection to one clause per error', () => {
    expect(
      condense({
        error: { type: 'prompt_outputs_failed_validation', message: 'Prompt outputs failed validation' },
        node_errors: {
          '3': {
            class_type: 'KSampler',
            errors: [
              {
                type: 'value_not_in_list',
                message: 'Value not in list',
                details: "sampler_name: 'euler_x' not in ['euler']",
                extra_info: { input_name: 'sampler_name' },
              },
            ],
          },
        },
      }),
    ).toBe(
      'prompt_outputs_failed_validation: Prompt outputs failed validation; node 3 KSampler: ' +
        "value_not_in_list: Value not in list: sampler_name: 'euler_x' not in ['euler']: input sampler_name",
    );
  });

  it('shows every value of every choice field and each bound of every number once, on the first case that sets the field', () => {
    const variants = choiceVariants();
    const schedulers = variants.filter(
      (variant) => variant.pipeline === '/sd/text2image/v1' && variant.name.includes(' with scheduler '),
    );
    // Twelve schedulers, on the case that sets one, its own left out.
    expect(schedulers[0]!.name).toMatch(
      /^\/sd\/text2image\/v1 with hires, .+ another scheduler with scheduler /,
    );
    expect(schedulers).toHaveLength(11);
    expect(new Set(schedulers.map((variant) => variant.body.scheduler)).size).toBe(11);
    // A list field: its first item replaced, on the case that names an adapter.
    const adapters = variants.filter((variant) => variant.name.includes(' with ip_adapter '));
    expect(adapters.map((variant) => variant.body.ip_adapter)).toContainEqual(['ip-adapter_sd15_light']);
    // A number at its bounds; an exclusive one at the nearest value inside (integers 1 away).
    const factors = variants.filter((variant) =>
      variant.name.startsWith('/superresolution/v1 with scale_factor '),
    );
    expect(factors.map((variant) => variant.body.scale_factor)).toEqual([0.01, 4]);
    const steps = variants.filter((variant) =>
      variant.name.startsWith('/sd/text2image/v1 with num_inference_steps '),
    );
    expect(steps.map((variant) => variant.body.num_inference_steps)).toEqual([1, 40]);
    expect(new Set(variants.map((variant) => variant.name)).size).toBe(variants.length);
  });
});

describe('every choice and bound of every pipeline', () => {
  it('compiles to a graph ComfyUI’s validation accepts, where the server holds the files it loads', async () => {
    const variants = choiceVariants();
    const compiled: { name: string; prompt: ApiPrompt }[] = [];
    for (const variant of variants) {
      try {
        compiled.push({
          name: variant.name,
          prompt: compileCase(variant, await caseJob(variant), CHECKPOINTS).prompt,
        });
      } catch (error) {
        // Refused before any server (an unmapped LCM LoRA, a distilled model's bounds): not this test's.
        expect(error).toBeInstanceOf(Error);
      }
    }
    // A server holding every file the graphs load.
    const files: Record<string, string[]> = {};
    for (const { prompt } of compiled) {
      for (const [folder, names] of Object.entries(modelFilesOf(prompt)))
        files[folder] = [...(files[folder] ?? []), ...names];
    }
    const served = await startFakeComfyUI({ models: files });
    try {
      const objectInfo = (await (await fetch(`${served.url}/object_info`)).json()) as ObjectInfo;
      const refused = compiled.flatMap(({ name, prompt }) => {
        const answer = validatePrompt(objectInfo, { prompt }, { fileExists: () => true });
        return answer.status === 200 && Object.keys(answer.nodeErrors).length === 0
          ? []
          : [`${name}: ${answer.status === 400 ? condense(answer.body) : JSON.stringify(answer)}`];
      });
      expect(refused).toEqual([]);
      // Most of the space compiles (the test is not vacuous).
      expect(compiled.length).toBeGreaterThan(variants.length * 0.9);
    } finally {
      await served.close();
    }
  });
});
