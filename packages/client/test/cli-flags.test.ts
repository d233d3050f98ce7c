import { CPU_ENGINE_NOTES } from '@imagegen/engine-cpu/notes';
import { describe, expect, it } from 'vitest';
import { parseArgs } from '../src/cli/args.ts';
import { RUN_OPTIONS } from '../src/cli/commands/run-options.ts';
import { pipelineHelp } from '../src/cli/help.ts';
import { PIPELINES, pipelineNamed } from '../src/cli/pipelines.ts';
import { flagValue } from '../src/cli/schema-fields.ts';

/** The flags `imagegen run` makes of each pipeline's request schema, and how it reads them. */

const field = (pipeline: string, name: string) =>
  pipelineNamed(pipeline).fields.find((f) => f.name === name)!;

describe('the flags of the pipelines', () => {
  it('cover every task path of the contract, and no field flag is also an option of run', () => {
    expect(PIPELINES.map((pipeline) => pipeline.path)).toContain('/train_model/v1');
    expect(PIPELINES).toHaveLength(34);
    const options = new Set(RUN_OPTIONS.flatMap((option) => [option.flag, `--no-${option.flag.slice(2)}`]));
    const clashes = PIPELINES.flatMap((p) =>
      p.fields.filter((f) => options.has(f.flag)).map((f) => `${p.name} ${f.flag}`),
    );
    expect(clashes).toEqual([]);
  });

  it('carry the notes of the cpu engine, which a default deployment serves, as its /openapi.json does', () => {
    const superresolution = pipelineNamed('superresolution');
    expect(superresolution.description).toMatch(
      /offered\. On the cpu engine `model_name` runs on shipped ESRGAN/,
    );
    expect(superresolution.description).toContain(CPU_ENGINE_NOTES.pipelines?.['/superresolution/v1']);
    expect(pipelineNamed('faceswap').description).toContain('must show a face');
    const safetyChecker = field('sd/text2image', 'safety_checker').description;
    expect(safetyChecker.endsWith(`is stored. ${CPU_ENGINE_NOTES.fields?.safety_checker}`)).toBe(true);
  });

  it('carry the cpu engine’s notes scoped to a request schema in the help of that pipeline’s flags alone', () => {
    expect(field('superresolution', 'model_name').description).toBe(
      'A named upscaler, or the hash of an uploaded one. The cpu engine runs each name on the shipped ' +
        'ESRGAN weights the operation description lists; a hash fails the task there.',
    );
    expect(field('superresolution', 'face_enhance').description).toBe(
      'Restore faces with a face-restoration model. The cpu engine has none: `true` fails the task.',
    );
    expect(field('upscaler', 'type').description).toBe(
      '`deblur` restores and enlarges faithfully; `variation` re-imagines detail with a diffusion model. ' +
        'On the cpu engine `variation` fails the task.',
    );
    const help = pipelineHelp(pipelineNamed('upscaler')).replace(/\s+/g, ' ');
    expect(help).toContain('On the cpu engine variation fails the task.');
    expect(pipelineHelp(pipelineNamed('superresolution')).replace(/\s+/g, ' ')).toContain(
      'The cpu engine has none: true fails the task.',
    );
    // Each in that one field of that one pipeline.
    const all = PIPELINES.flatMap((p) => p.fields.map((f) => f.description));
    const scoped = CPU_ENGINE_NOTES.schemaFields ?? {};
    for (const note of [scoped.SuperresolutionPrompt, scoped.UpscalerPrompt].flatMap((f) =>
      Object.values(f ?? {}),
    )) {
      expect(
        all.filter((text) => text.includes(note)),
        note,
      ).toHaveLength(1);
    }
  });

  it('say type, bounds, default, choices and image uploads in --help', () => {
    const help = pipelineHelp(pipelineNamed('sd/text2image'));
    expect(help).toMatch(/^ {2}--samples <integer> +> 0, ≤ 4; default 1$/m);
    expect(help).toMatch(/^ {2}--prompt <text> +required$/m);
    expect(help).toMatch(/^ {2}--hires, --no-hires +default false$/m);
    expect(help).toMatch(/^ {2}--lora-weights <number>\.\.\. +each > -10, ≤ 10; repeat for several$/m);
    expect(help).toContain('--scheduler <choice>');
    expect(pipelineHelp(pipelineNamed('sd/image2image'))).toMatch(
      /^ {2}--init-image <url\|file> +required; a local file is uploaded first/m,
    );
    expect(pipelineHelp(pipelineNamed('superresolution'))).toMatch(/RealESRGAN_x4plus.*a model hash/s);
    for (const pipeline of PIPELINES) {
      const text = pipelineHelp(pipeline);
      for (const f of pipeline.fields) expect(text, pipeline.name).toContain(f.flag);
      expect(Math.max(...text.split('\n').map((line) => line.length)), pipeline.name).toBeLessThanOrEqual(
        100,
      );
    }
  });

  it('are found by short name, path, or path without its slash', () => {
    expect(pipelineNamed('sd/text2image').path).toBe('/sd/text2image/v1');
    expect(pipelineNamed('/sd/text2image/v1').path).toBe('/sd/text2image/v1');
    expect(pipelineNamed('generate/v3').path).toBe('/generate/v3');
    expect(pipelineNamed('generate').path).toBe('/generate/v1');
    expect(() => pipelineNamed('text2image/v9')).toThrow(/did you mean sd\/text2image, sdxl\/text2image/);
  });
});

describe('reading the command line', () => {
  const specs = [
    { flag: '--seed', takesValue: true },
    { flag: '--hires', takesValue: false },
    { flag: '--negative-prompt', takesValue: true },
  ];

  it('gives a value flag the next word whatever it is, and reads switches both ways', () => {
    const { positionals, values } = parseArgs(
      ['sd/text2image', '--seed', '-1', '--no-hires', '--negative_prompt=a=b', '--', '--seed'],
      specs,
    );
    expect(positionals).toEqual(['sd/text2image', '--seed']);
    expect(Object.fromEntries(values)).toEqual({
      '--seed': ['-1'],
      '--hires': ['false'],
      '--negative-prompt': ['a=b'],
    });
    expect(Object.fromEntries(parseArgs(['--hires'], specs).values)).toEqual({ '--hires': ['true'] });
  });

  it('turns repeated flags into lists where the field takes one, and refuses them elsewhere', () => {
    expect(flagValue(field('sd/text2image', 'lora_weights'), ['0.5', '1'])).toEqual([0.5, 1]);
    expect(flagValue(field('sd/text2image', 'lora_weights'), ['0.5'])).toEqual([0.5]);
    const either = field('sdxl/image2image', 'ip_adapter_image');
    expect(flagValue(either, ['https://a.example/x.png'])).toBe('https://a.example/x.png');
    expect(flagValue(either, ['https://a.example/x.png', 'y.png'])).toEqual([
      'https://a.example/x.png',
      'y.png',
    ]);
    expect(() => flagValue(field('sd/text2image', 'samples'), ['1', '2'])).toThrow(
      /--samples was given 2 times/,
    );
    expect(() => flagValue(field('outpainting', 'expansion'), ['64', 'wide'])).toThrow(
      '--expansion takes a whole number, not "wide"',
    );
  });
});
