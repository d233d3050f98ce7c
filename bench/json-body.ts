/**
 * The cost of reading a JSON request body the way the original service does (the contract's
 * `readRequestBody`: Python's encoding detection, CPython's json scanner, number literals recorded
 * for validation) next to what Node does with the same bytes (`JSON.parse(bytes.toString())`),
 * on three bodies: a typical text2image request (~300 bytes), the same with floats, and a 64 KiB
 * list of floats.
 *
 *   npm run --silent bench -- json-body      (last line: one JSON object, ns per body)
 *
 * BENCH_ROUNDS (5) rounds of about half a second per body and reader; figures are medians.
 */
import { readRequestBody } from '@imagegen/contract';

const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 5));
const ROUND_MS = 500;

const typical = {
  prompt: 'a lighthouse on a cliff at dawn, watercolour, soft morning light, gulls, highly detailed',
  negative_prompt: 'blurry, low quality, watermark, text, deformed',
  width: 512,
  height: 512,
  samples: 1,
  num_inference_steps: 20,
  seed: 1234567,
  scheduler: 'EulerDiscreteScheduler',
  webhook: 'https://hooks.example.com/imagegen/done',
  track_id: 'job-2024-0001',
};
const bodies: Record<string, Buffer> = {
  typical: Buffer.from(JSON.stringify(typical)),
  with_floats: Buffer.from(
    JSON.stringify({ ...typical, guidance_scale: 7.5, strength: 0.8, lora_weights: [0.6, 0.35] }),
  ),
  floats_64k: Buffer.from(JSON.stringify({ lora_weights: Array.from({ length: 6000 }, (_, i) => i + 0.5) })),
};

const readers: Record<string, (bytes: Buffer) => unknown> = {
  json_parse: (bytes) => JSON.parse(bytes.toString()),
  read_request_body: (bytes) => readRequestBody(bytes, 'application/json'),
};

/** Nanoseconds per call, over one round of about ROUND_MS. */
function round(read: (bytes: Buffer) => unknown, bytes: Buffer): number {
  let calls = 0;
  let sink = 0;
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(ROUND_MS * 1e6);
  let now = start;
  while (now < deadline) {
    for (let i = 0; i < 200; i++) if (read(bytes)) sink++;
    calls += 200;
    now = process.hrtime.bigint();
  }
  if (sink !== calls) throw new Error('a reader answered nothing');
  return Number(now - start) / calls;
}

export default async function jsonBody(): Promise<void> {
  const figures: Record<string, number> = {};
  for (const [body, bytes] of Object.entries(bodies)) {
    const times: Record<string, number[]> = {};
    for (let r = 0; r < ROUNDS + 1; r++) {
      // Alternating readers; the first round warms both up and is not counted.
      for (const [name, read] of Object.entries(readers)) {
        const ns = round(read, bytes);
        if (r === 0) continue;
        times[name] ??= [];
        times[name].push(ns);
      }
    }
    for (const [name, list] of Object.entries(times)) {
      list.sort((a, b) => a - b);
      figures[`${body}_${name}_ns`] = Math.round(list[Math.floor(list.length / 2)]!);
    }
    figures[`${body}_bytes`] = bytes.length;
    figures[`${body}_ratio`] =
      Math.round((figures[`${body}_read_request_body_ns`]! / figures[`${body}_json_parse_ns`]!) * 100) / 100;
    console.error(`[bench json-body] ${body}: ${JSON.stringify(figures)}`);
  }
  console.log(JSON.stringify(figures));
}
