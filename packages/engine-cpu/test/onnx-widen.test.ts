import * as ort from 'onnxruntime-node';
import { describe, expect, it } from 'vitest';
import { widenFloat16Model } from '../src/onnx-widen.ts';

/**
 * A hand-built float16 model, run by onnxruntime before and after widening:
 *
 *   X (float32) -> Cast(to float16) -> Xh
 *   Y = Add(Xh, W), a float16 output      W: float16 raw_data
 *   Z = Cast(Mul(Xh, B), to float32)      B: float16 int32_data (the other storage ONNX allows)
 *
 * X's cast node comes last, out of topological order, as float16 converters write it.
 */

type Value = number | string | Uint8Array | Value[][];

/** Encodes [field number, value] pairs: numbers as varints, the rest length-delimited. */
function message(fields: [number, Value][]): Uint8Array {
  const bytes: number[] = [];
  const varint = (n: number) => {
    do {
      let byte = n % 128;
      n = Math.floor(n / 128);
      if (n > 0) byte |= 0x80;
      bytes.push(byte);
    } while (n > 0);
  };
  for (const [no, value] of fields) {
    if (typeof value === 'number') {
      varint(no * 8);
      varint(value);
      continue;
    }
    const payload =
      typeof value === 'string'
        ? new TextEncoder().encode(value)
        : value instanceof Uint8Array
          ? value
          : message(value as [number, Value][]);
    varint(no * 8 + 2);
    varint(payload.length);
    bytes.push(...payload);
  }
  return Uint8Array.from(bytes);
}

const FLOAT = 1;
const FLOAT16 = 10;
const half = (bits: number[]) => new Uint8Array(Uint16Array.from(bits).buffer);

const node = (op: string, inputs: string[], outputs: string[], to?: number): [number, Value][] => [
  ...inputs.map((name): [number, Value] => [1, name]),
  ...outputs.map((name): [number, Value] => [2, name]),
  [4, op],
  ...(to === undefined
    ? []
    : [
        [
          5,
          [
            [1, 'to'],
            [3, to],
            [20, 2],
          ],
        ] as [number, Value],
      ]),
];
const valueInfo = (name: string, elemType: number): [number, Value][] => [
  [1, name],
  [
    2,
    [
      [
        1,
        [
          [1, elemType],
          [2, [[1, [[1, 4]]]]],
        ],
      ],
    ],
  ],
];

// W: 2^-11 (0x1000), 2^-24 (the smallest subnormal, 0x0001), -2 (0xc000), 65504 (0x7bff).
const W_BITS = [0x1000, 0x0001, 0xc000, 0x7bff];
// B: 0.5 (0x3800), 1 (0x3c00), -1 (0xbc00), 2 (0x4000).
const B_BITS = [0x3800, 0x3c00, 0xbc00, 0x4000];

function float16Model(): Uint8Array {
  const graph: [number, Value][] = [
    [1, node('Add', ['Xh', 'W'], ['Y'])],
    [1, node('Mul', ['Xh', 'B'], ['Zh'])],
    [1, node('Cast', ['Zh'], ['Z'], FLOAT)],
    [1, node('Cast', ['X'], ['Xh'], FLOAT16)],
    [2, 'tiny'],
    [
      5,
      [
        [1, 4],
        [2, FLOAT16],
        [8, 'W'],
        [9, half(W_BITS)],
      ],
    ],
    [5, [[1, 4], [2, FLOAT16], ...B_BITS.map((bits): [number, Value] => [5, bits]), [8, 'B']]],
    [11, valueInfo('X', FLOAT)],
    [12, valueInfo('Y', FLOAT16)],
    [12, valueInfo('Z', FLOAT)],
    [13, valueInfo('Xh', FLOAT16)],
    [13, valueInfo('Zh', FLOAT16)],
  ];
  return message([
    [1, 8],
    [2, 'imagegen-test'],
    [7, graph],
    [
      8,
      [
        [1, ''],
        [2, 17],
      ],
    ],
  ]);
}

async function run(model: Uint8Array, x: number[]): Promise<Record<string, ort.Tensor>> {
  const session = await ort.InferenceSession.create(model);
  try {
    return await session.run({ X: new ort.Tensor('float32', Float32Array.from(x), [4]) });
  } finally {
    await session.release();
  }
}

describe('widenFloat16Model', () => {
  const x = [1, 0, 3, -1];

  const values = (tensor: ort.Tensor | undefined) => [...((tensor?.data ?? []) as Float32Array)];

  it('answers float16 before widening (the baseline the next test differs from)', async () => {
    const out = await run(float16Model(), x);
    expect(out.Y?.type).toBe('float16');
    expect(out.Z?.type).toBe('float32');
  });

  it('turns float16 weights, casts and types into float32, so the graph computes in float32', async () => {
    const out = await run(widenFloat16Model(float16Model()), x);
    expect(out.Y?.type).toBe('float32');
    // Exact in float32 only: float16 would round 1 + 2^-11 to 1 and 65503 to 65504.
    expect(values(out.Y)).toEqual([1 + 2 ** -11, 2 ** -24, 1, 65503]);
    // B was stored as int32_data; it arrives as the same values.
    expect(values(out.Z)).toEqual([0.5, 0, -3, -2]);
  });

  it('keeps only the outputs asked for, and the nodes and weights they need', async () => {
    const full = widenFloat16Model(float16Model());
    const pruned = widenFloat16Model(float16Model(), { keepOutputs: ['Y'] });
    const session = await ort.InferenceSession.create(pruned);
    expect(session.outputNames).toEqual(['Y']);
    expect(session.inputNames).toEqual(['X']);
    await session.release();
    // Mul, Z's cast, B (4 floats) and Zh's value info are gone; X's cast, listed last, stays.
    expect(pruned.length).toBeLessThan(full.length - 16);
    expect(Buffer.from(pruned).includes(Buffer.from('Mul'))).toBe(false);
    expect(values((await run(pruned, x)).Y)).toEqual([1 + 2 ** -11, 2 ** -24, 1, 65503]);
  });

  it('refuses an output the model does not have, and bytes that are not a model', () => {
    expect(() => widenFloat16Model(float16Model(), { keepOutputs: ['nope'] })).toThrow(
      'the model has no output nope',
    );
    expect(() => widenFloat16Model(Uint8Array.from([0x0f, 0x01]))).toThrow(/not an ONNX model/);
    expect(() => widenFloat16Model(Uint8Array.from([0x3a, 0x7f, 0x01]))).toThrow(/not an ONNX model/);
  });
});
