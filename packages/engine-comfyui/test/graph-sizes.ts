import type { ApiPrompt } from '../src/contracts.ts';

/**
 * What a compiled graph does to sizes, worked out node by node as ComfyUI computes them: the
 * width, height and batch of every picture, latent and mask, from the input pictures' sizes. The
 * request-space test reads its invariants (what is sampled, what is answered) from here, not from
 * the compilers' own size functions.
 */
export interface Extent {
  readonly width: number;
  readonly height: number;
  readonly batch: number;
}

type Link = readonly [string, number];

function isLink(value: unknown): value is Link {
  return Array.isArray(value) && value.length === 2 && typeof value[0] === 'string';
}

/** ComfyUI's VAE encodes whole 8 px blocks: it drops what is left over. */
const encoded = (e: Extent): Extent => ({
  ...e,
  width: Math.floor(e.width / 8) * 8,
  height: Math.floor(e.height / 8) * 8,
});

/** Python's round(), as ComfyUI rounds a scaled side: halves go to the even neighbour. */
function roundHalfEven(x: number): number {
  const floor = Math.floor(x);
  return x - floor !== 0.5 ? Math.round(x) : floor % 2 === 0 ? floor : floor + 1;
}

/** The factor of an ESRGAN file, as its name says (RealESRGAN_x4plus, RealESRGAN_x2plus). */
const factorOf = (file: string) => Number(/x(\d)/i.exec(file)?.[1] ?? 4);

export class GraphSizes {
  private readonly memo = new Map<string, (Extent | undefined)[]>();

  constructor(
    private readonly prompt: ApiPrompt,
    /** The uploaded file name of each input picture, to its size. */
    private readonly pictures: Readonly<Record<string, { width: number; height: number }>>,
  ) {}

  /** The extent a link carries (a picture, latent or mask), or undefined for anything else. */
  of(link: unknown): Extent | undefined {
    if (!isLink(link)) return undefined;
    return this.outputs(link[0])[link[1]];
  }

  /** The extent of a node's input. */
  input(id: string, name: string): Extent | undefined {
    return this.of(this.prompt[id]?.inputs[name]);
  }

  /** The node a link comes from. */
  source(link: unknown): { id: string; class_type: string; inputs: Readonly<Record<string, unknown>> } {
    if (!isLink(link)) throw new Error(`not a link: ${JSON.stringify(link)}`);
    return { id: link[0], ...this.prompt[link[0]]! };
  }

  private outputs(id: string): (Extent | undefined)[] {
    const known = this.memo.get(id);
    if (known) return known;
    const node = this.prompt[id];
    if (!node) throw new Error(`no node ${id}`);
    const inputs = node.inputs as Record<string, unknown>;
    const n = (name: string) => Number(inputs[name]);
    const from = (name: string) => {
      const extent = this.of(inputs[name]);
      if (!extent) throw new Error(`${node.class_type} ${id}: no extent at ${name}`);
      return extent;
    };
    const sized = (width: number, height: number, batch: number): Extent => ({
      width: Math.round(width),
      height: Math.round(height),
      batch,
    });
    let out: (Extent | undefined)[];
    switch (node.class_type) {
      case 'LoadImage': {
        const picture = this.pictures[String(inputs['image'])];
        if (!picture) throw new Error(`no size for picture ${String(inputs['image'])}`);
        out = [sized(picture.width, picture.height, 1), sized(picture.width, picture.height, 1)];
        break;
      }
      case 'EmptyLatentImage':
      case 'EmptySD3LatentImage':
      case 'EmptyImage':
        out = [sized(n('width'), n('height'), n('batch_size'))];
        break;
      // IC-Light's light map: a gradient of the size it is asked for.
      case 'LightSource':
        out = [sized(n('width'), n('height'), 1)];
        break;
      case 'ImageScale':
      case 'LatentUpscale': {
        const source = from(node.class_type === 'ImageScale' ? 'image' : 'samples');
        out = [sized(n('width'), n('height'), source.batch)];
        break;
      }
      case 'ImageScaleBy': {
        const source = from('image');
        out = [
          {
            width: roundHalfEven(source.width * n('scale_by')),
            height: roundHalfEven(source.height * n('scale_by')),
            batch: source.batch,
          },
        ];
        break;
      }
      case 'ImageScaleToTotalPixels': {
        const source = from('image');
        const factor = Math.sqrt((n('megapixels') * 1024 * 1024) / (source.width * source.height));
        out = [sized(source.width * factor, source.height * factor, source.batch)];
        break;
      }
      case 'ImageUpscaleWithModel': {
        const source = from('image');
        const loader = this.source(inputs['upscale_model']);
        const factor = factorOf(String(loader.inputs['model_name']));
        out = [sized(source.width * factor, source.height * factor, source.batch)];
        break;
      }
      case 'VAEEncode':
        out = [encoded(from('pixels'))];
        break;
      case 'InpaintModelConditioning':
        out = [undefined, undefined, encoded(from('pixels'))];
        break;
      case 'RepeatLatentBatch':
      case 'RepeatImageBatch': {
        const source = from(node.class_type === 'RepeatLatentBatch' ? 'samples' : 'image');
        out = [{ ...source, batch: source.batch * n('amount') }];
        break;
      }
      case 'ImageBatch': {
        const first = from('image1');
        out = [{ ...first, batch: first.batch + from('image2').batch }];
        break;
      }
      case 'ImagePadForOutpaint': {
        const source = from('image');
        const padded = sized(
          source.width + n('left') + n('right'),
          source.height + n('top') + n('bottom'),
          source.batch,
        );
        out = [padded, padded];
        break;
      }
      case 'ImageCrop':
        out = [sized(n('width'), n('height'), from('image').batch)];
        break;
      case 'ImageCompositeMasked':
        out = [from('destination')];
        break;
      case 'KSampler':
      case 'KSamplerAdvanced':
        out = [from('latent_image')];
        break;
      case 'VAEDecode':
        out = [from('samples')];
        break;
      case 'CatVTONWrapper':
      case 'ReActorFaceSwap':
        out = [from(node.class_type === 'CatVTONWrapper' ? 'image' : 'input_image')];
        break;
      default: {
        // Everything else passes the extent of its first picture, latent or mask through.
        const first = Object.values(inputs)
          .map((value) => this.of(value))
          .find((extent) => extent !== undefined);
        out = [first, first, first];
      }
    }
    this.memo.set(id, out);
    return out;
  }
}
