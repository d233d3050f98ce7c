/**
 * The compilers read their request through types taken from the contract's schemas: `tsc -p .`
 * checks this file, and each line under `@ts-expect-error` must fail to compile (an expectation
 * that compiles is itself an error), so a field renamed or retyped in the contract stops the build
 * where a compiler reads it.
 */
import type { LoraFields } from '../src/chains/lora-stack.ts';
import type { FieldsOf, RequestFields } from '../src/chains/request-fields.ts';
import { type SdPipeline, stableDiffusionCompiler } from '../src/chains/stable-diffusion.ts';

declare const sd: RequestFields<FieldsOf<'/sd/text2image/v1'>>;
declare const faceswap: RequestFields<FieldsOf<'/faceswap/v1'>>;
declare function readsLoras(fields: RequestFields<LoraFields>): void;

export function readsByName(): void {
  const width: number = sd.number('width');
  const clipSkip: number | undefined = sd.optionalNumber('clip_skip');
  const prompt: string = sd.string('prompt');
  const hires: boolean = sd.bool('hires');
  const loras: readonly string[] = sd.list('lora_models');
  sd.refuseUnlessDefault({ attn: 'not served' });
  void [width, clipSkip, prompt, hires, loras];

  // @ts-expect-error a misspelt field
  sd.string('promt');
  // @ts-expect-error a number field read as a string
  sd.string('width');
  // @ts-expect-error a string field read as a number
  sd.number('prompt');
  // @ts-expect-error a list field read as a boolean
  sd.bool('lora_models');
  // @ts-expect-error a list read with another item type
  const weights: readonly string[] = sd.list('lora_weights');
  // @ts-expect-error refusing a field the request does not have
  sd.refuseUnlessDefault({ atn: 'not served' });
  // @ts-expect-error a field of another pipeline
  faceswap.has('prompt');
  // @ts-expect-error a field the schema leaves optional may be absent
  const modelId: string = sd.input.model_id;
  void modelId;
  void weights;
}

export function chainsTakeWhatTheirCallersShare(): void {
  readsLoras(sd);
  // @ts-expect-error a request without the chain's fields
  readsLoras(faceswap);
  // @ts-expect-error a request whose field has another type than the chain reads
  readsLoras(null as unknown as RequestFields<{ lora_models: readonly number[]; lora_weights: undefined }>);

  stableDiffusionCompiler('/generate/v2', 'sdxl', 'text2image');
  const sdPaths: SdPipeline[] = ['/sd/inpainting/v1', '/sdxl/controlnet/v1', '/generate/v1'];
  void sdPaths;
  // @ts-expect-error a pipeline whose request lacks the SD graph's fields
  stableDiffusionCompiler('/faceswap/v1', 'sd', 'text2image');
}
