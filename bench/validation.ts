/**
 * The request validator on its own (no HTTP, no database): nanoseconds per body for
 *
 *   typical:  the body bench/api.ts submits (every value already of its field's type)
 *   coerced:  the same fields sent as pydantic v1 converts them ("512" for an int, "yes" for a bool)
 *   refused:  a body with four wrong fields (the 422 detail is built)
 *
 *   npm run --silent bench -- validation      (last line: one JSON object)
 *
 * Each figure is the median of BENCH_ROUNDS (7) rounds of BENCH_ITERATIONS (200000) validations
 * of a fresh copy of the body (validation changes a body in place); the copy's cost is measured
 * alone and taken off.
 */
import { compileRequestValidator, endpointByPath } from '@imagegen/contract';

const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 7));
const ITERATIONS = Math.max(1, Number(process.env.BENCH_ITERATIONS ?? 200_000));

const BODIES: Record<string, string> = {
  typical: JSON.stringify({
    prompt: 'a lighthouse at dawn, watercolour, soft light',
    negative_prompt: 'blurry, low quality',
    width: 512,
    height: 512,
    samples: 1,
  }),
  coerced: JSON.stringify({
    prompt: 'a lighthouse at dawn, watercolour, soft light',
    negative_prompt: 'blurry, low quality',
    width: '512',
    height: 512.0,
    samples: '1',
    guidance_scale: '7.5',
    hires: 'yes',
  }),
  refused: JSON.stringify({
    prompt: ['a lighthouse'],
    negative_prompt: '',
    width: 'wide',
    samples: 9,
    scheduler: 'FastScheduler',
  }),
};

function nsPerOp(run: (iterations: number) => void): number {
  const times: number[] = [];
  run(Math.min(ITERATIONS, 10_000)); // warm up
  for (let round = 0; round < ROUNDS; round++) {
    const start = process.hrtime.bigint();
    run(ITERATIONS);
    times.push(Number(process.hrtime.bigint() - start) / ITERATIONS);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

export default async function validationBench(): Promise<void> {
  const endpoint = endpointByPath('/sd/text2image/v1');
  if (!endpoint) throw new Error('no /sd/text2image/v1 in the endpoint table');
  const validate = compileRequestValidator(endpoint);
  const result: Record<string, number> = {};
  let sink = 0;
  for (const [name, text] of Object.entries(BODIES)) {
    const copy = nsPerOp((n) => {
      for (let i = 0; i < n; i++) sink += Object.keys(JSON.parse(text)).length;
    });
    const total = nsPerOp((n) => {
      for (let i = 0; i < n; i++) sink += validate(JSON.parse(text)).ok ? 1 : 0;
    });
    result[`${name}_ns`] = Math.round(total - copy);
    console.error(`[bench validation] ${name}: ${result[`${name}_ns`]} ns per body`);
  }
  if (sink < 0) console.error(sink);
  console.log(JSON.stringify({ rounds: ROUNDS, iterations: ITERATIONS, ...result }));
}
