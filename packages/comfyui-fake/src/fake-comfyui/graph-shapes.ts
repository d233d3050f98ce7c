import type { ApiPrompt, ObjectInfo } from '@imagegen/engine-comfyui/engine';
import { linkSource } from './execution-order.ts';

/**
 * What the fake "computes": the size and batch of every image, latent and mask in a graph, worked
 * out from the nodes that set or change them (empty latents, loaded images, scales, upscale
 * models, padding, batches), so the saved images have the size and count the real graph would
 * give. Everything else passes the size of its first image or latent input through.
 */

export interface Picture {
  readonly width: number;
  readonly height: number;
  readonly batch: number;
  /** Identifies the content: the producing node's signature and output. */
  readonly key: string;
}

type Size = Omit<Picture, 'key'>;

/** A node failing as it runs (the fake's execution_error), with Python's exception type. */
export class RuntimeFailure extends Error {
  constructor(
    readonly exceptionType: string,
    message: string,
    /** What ComfyUI adds after the exception's text (its out-of-memory tips); empty for any other. */
    readonly tips = '',
  ) {
    super(message);
  }
}

export interface ShapeContext {
  /** An input folder file's pixel size; undefined when the fake holds no such image. */
  inputImage(name: string): { width: number; height: number } | undefined;
  /** The node's cache signature (its class, inputs and ancestors). */
  signature(id: string): string;
}

const PICTURE_TYPES = new Set(['IMAGE', 'LATENT', 'MASK']);

export class GraphShapes {
  private readonly memo = new Map<string, readonly (Picture | undefined)[]>();

  constructor(
    private readonly prompt: ApiPrompt,
    private readonly objectInfo: ObjectInfo,
    private readonly context: ShapeContext,
  ) {}

  /** The node's outputs; undefined for outputs that are not images, latents or masks. */
  outputs(id: string): readonly (Picture | undefined)[] {
    const known = this.memo.get(id);
    if (known) return known;
    const node = this.prompt[id]!;
    const types = this.objectInfo[node.class_type]?.output ?? [];
    const view = new NodeView(id, this);
    const sizes = (
      RULES[node.class_type] ?? (/^Empty\w*Latent/.test(node.class_type) ? emptyLatent : passThrough)
    )(view);
    const outputs = types.map((type, index) => {
      const size = PICTURE_TYPES.has(String(type)) ? sizes[index] : undefined;
      return size && { ...size, key: `${this.context.signature(id)}:${index}` };
    });
    this.memo.set(id, outputs);
    return outputs;
  }

  /** The picture a node's input is linked to. */
  input(id: string, name: string): Picture | undefined {
    const value = this.prompt[id]?.inputs[name];
    const from = linkSource(value);
    return from === undefined ? undefined : this.outputs(from)[(value as [string, number])[1]];
  }

  /** The first image or latent among a node's inputs, in the graph's order. */
  firstInputPicture(id: string): Picture | undefined {
    for (const name of Object.keys(this.prompt[id]?.inputs ?? {})) {
      const picture = this.input(id, name);
      if (picture) return picture;
    }
    return undefined;
  }

  classOf(id: string): string {
    return this.prompt[id]!.class_type;
  }

  /** @internal for NodeView */
  node(id: string) {
    return this.prompt[id]!;
  }

  /** @internal for NodeView */
  file(name: string) {
    return this.context.inputImage(name);
  }
}

class NodeView {
  constructor(
    readonly id: string,
    private readonly graph: GraphShapes,
  ) {}

  value(name: string): unknown {
    return this.graph.node(this.id).inputs[name];
  }

  number(name: string): number {
    return Number(this.value(name));
  }

  picture(name: string): Size {
    const picture = this.graph.input(this.id, name);
    if (!picture) throw new RuntimeFailure('KeyError', `'${name}'`);
    return picture;
  }

  /** The first image or latent among the inputs, in the graph's order. */
  firstPicture(): Size | undefined {
    return this.graph.firstInputPicture(this.id);
  }

  loadedImage(name: string): Size {
    const file = String(this.value(name));
    const size = this.graph.file(file);
    if (!size) {
      throw new RuntimeFailure('PIL.UnidentifiedImageError', `cannot identify image file '${file}'`);
    }
    return { ...size, batch: 1 };
  }

  /** An upscale model's factor, read from its file name (`4x-UltraSharp`, `esrgan-x4`), else 4. */
  upscaleFactor(name: string): number {
    const from = linkSource(this.value(name));
    const file = String((from && this.graph.node(from).inputs['model_name']) ?? '');
    const match = /(\d+)x|x(\d+)/i.exec(file);
    return Number(match?.[1] ?? match?.[2] ?? 4);
  }
}

type Rule = (node: NodeView) => readonly (Size | undefined)[];

const sized = (width: number, height: number, batch: number): Size => ({
  width: Math.max(1, Math.round(width)),
  height: Math.max(1, Math.round(height)),
  batch: Math.max(1, Math.round(batch)),
});

/** A VAE works on multiples of 8 pixels: encoding crops the rest. */
const cropTo8 = (size: Size): Size =>
  sized(Math.floor(size.width / 8) * 8 || 8, Math.floor(size.height / 8) * 8 || 8, size.batch);

const scaleBy = (size: Size, factor: number): Size =>
  sized(size.width * factor, size.height * factor, size.batch);

/** ImageScale / LatentUpscale: 0 for one side keeps the aspect ratio. */
const scaleTo = (size: Size, width: number, height: number): Size => {
  if (width === 0 && height === 0) return size;
  if (width === 0) return sized((size.width * height) / size.height, height, size.batch);
  if (height === 0) return sized(width, (size.height * width) / size.width, size.batch);
  return sized(width, height, size.batch);
};

const emptyLatent: Rule = (node) => {
  const latent = sized(node.number('width'), node.number('height'), Number(node.value('batch_size') ?? 1));
  return [latent, latent];
};

const passThrough: Rule = (node) => {
  const picture = node.firstPicture();
  return [picture, picture, picture];
};

const encode: Rule = (node) => [cropTo8(node.picture('pixels'))];

const RULES: Readonly<Record<string, Rule>> = {
  LoadImage: (node) => {
    const image = node.loadedImage('image');
    return [image, image];
  },
  LoadImageMask: (node) => [node.loadedImage('image')],
  // Stage C's and stage B's latents, both standing for the picture's size.
  StableCascade_EmptyLatentImage: emptyLatent,
  VAEEncode: encode,
  VAEEncodeTiled: encode,
  VAEEncodeForInpaint: encode,
  InpaintModelConditioning: (node) => [undefined, undefined, cropTo8(node.picture('pixels'))],
  EmptyImage: emptyLatent,
  ImageScale: (node) => [scaleTo(node.picture('image'), node.number('width'), node.number('height'))],
  ImageScaleBy: (node) => [scaleBy(node.picture('image'), node.number('scale_by'))],
  ImageScaleToTotalPixels: (node) => {
    const image = node.picture('image');
    return [
      scaleBy(image, Math.sqrt((node.number('megapixels') * 1024 * 1024) / (image.width * image.height))),
    ];
  },
  LatentUpscale: (node) => [
    cropTo8(scaleTo(node.picture('samples'), node.number('width'), node.number('height'))),
  ],
  LatentUpscaleBy: (node) => [cropTo8(scaleBy(node.picture('samples'), node.number('scale_by')))],
  ImageUpscaleWithModel: (node) => [scaleBy(node.picture('image'), node.upscaleFactor('upscale_model'))],
  ImagePadForOutpaint: (node) => {
    const image = node.picture('image');
    const padded = sized(
      image.width + node.number('left') + node.number('right'),
      image.height + node.number('top') + node.number('bottom'),
      image.batch,
    );
    return [padded, padded];
  },
  ImageCrop: (node) => {
    const image = node.picture('image');
    return [
      sized(
        Math.min(node.number('width'), image.width),
        Math.min(node.number('height'), image.height),
        image.batch,
      ),
    ];
  },
  RepeatImageBatch: (node) => {
    const image = node.picture('image');
    return [sized(image.width, image.height, image.batch * node.number('amount'))];
  },
  RepeatLatentBatch: (node) => {
    const latent = node.picture('samples');
    return [sized(latent.width, latent.height, latent.batch * node.number('amount'))];
  },
  LatentFromBatch: (node) => {
    const latent = node.picture('samples');
    const left = latent.batch - node.number('batch_index');
    return [sized(latent.width, latent.height, Math.min(node.number('length'), left))];
  },
  // IC-Light's light map: a gradient of the size and batch it is asked for.
  LightSource: (node) => [
    sized(node.number('width'), node.number('height'), Number(node.value('batch_size') ?? 1)),
  ],
  ImageBatch: (node) => {
    const first = node.picture('image1');
    return [sized(first.width, first.height, first.batch + node.picture('image2').batch)];
  },
};
