import { createHash } from 'node:crypto';

/**
 * What the fake's TrainLoraNode "trains": a small, valid `.safetensors` file in the layout
 * SaveLoRANode writes (`safetensors.torch.save_file` of the trained weights: an 8-byte little-endian
 * header length, a JSON header padded with spaces, then the tensors' bytes), with one LoRA pair of
 * `rank` for one UNet layer under the keys ComfyUI's LoRA loader reads. Its bytes come from `from`
 * (the training's cache signature), so the same training saves the same file.
 */
export function fakeLora(from: string, rank: number): Buffer {
  const layer = 'diffusion_model.input_blocks.1.1.proj_in';
  const tensors: [string, number[]][] = [
    [`${layer}.lora_down.weight`, [rank, 4]],
    [`${layer}.lora_up.weight`, [4, rank]],
  ];
  const header: Record<string, unknown> = {};
  const chunks: Buffer[] = [];
  let offset = 0;
  for (const [name, shape] of tensors) {
    const length = shape.reduce((a, b) => a * b, 1) * 2;
    header[name] = { dtype: 'BF16', shape, data_offsets: [offset, offset + length] };
    chunks.push(bytesFrom(`${from}:${name}`, length));
    offset += length;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (json.length % 8)) % 8);
  const size = Buffer.alloc(8);
  size.writeBigUInt64LE(BigInt(json.length));
  return Buffer.concat([size, Buffer.from(json), ...chunks]);
}

function bytesFrom(seed: string, length: number): Buffer {
  const out: Buffer[] = [];
  for (let n = 0; out.length * 32 < length; n++)
    out.push(createHash('sha256').update(`${seed}:${n}`).digest());
  return Buffer.concat(out).subarray(0, length);
}
