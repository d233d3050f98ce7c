import { describe, expect, it } from 'vitest';
import { blendWidth, MIN_TILE_SIDE, outpaintTiles, TILE_OVERLAP } from '../src/chains/outpainting.ts';
import { colourName } from '../src/chains/palette.ts';
import { requestFields } from '../src/chains/request-fields.ts';
import { logoText } from '../src/compilers/logo.ts';
import type { CompiledWorkflow } from '../src/contracts.ts';
import { compileRequest, nodesOf, url, validatedRequest } from './compile-request.ts';

/**
 * The fields the original service documents and its frontend sends, each doing on this engine what
 * the original's pages (or the model's and node pack's authors) say: style alignment, masked
 * controlnet inpainting, the palette, the logo's own prompt, and outpainting's blend band,
 * stretching and tiles.
 */

/** The node a link points at. */
function source(workflow: CompiledWorkflow, link: unknown) {
  const [id] = link as [string, number];
  return { id, ...workflow.prompt[id]! };
}

describe('style-aligned generation (attn, adain, style)', () => {
  it("patches the model the sampler uses with style_aligned_comfy's batch alignment, as the paper's handler sets it", () => {
    const workflow = compileRequest('/sdxl/text2image/v1', {
      attn: true,
      adain: true,
      style: 0.7,
      samples: 3,
    });
    const [align] = nodesOf(workflow, 'StyleAlignedBatchAlign');
    expect(align?.inputs).toMatchObject({ share_norm: 'disabled', share_attn: 'q+k', scale: 0.7 });
    expect(nodesOf(workflow, 'KSampler')[0]?.inputs['model']).toEqual([align?.id, 0]);
    expect(workflow.notes).toBeUndefined();
  });

  it('turns AdaIN off with adain: false, takes the pack’s own strength without style, and any one field asks for it', () => {
    const alignOf = (extra: Record<string, unknown>) =>
      nodesOf(compileRequest('/sd/text2image/v1', { samples: 2, ...extra }), 'StyleAlignedBatchAlign')[0]
        ?.inputs;
    expect(alignOf({ style: 0.3, adain: false })).toMatchObject({ share_attn: 'disabled', scale: 0.3 });
    expect(alignOf({ attn: true })).toMatchObject({ share_attn: 'q+k', scale: 1 });
    expect(alignOf({ adain: true })).toMatchObject({ share_attn: 'q+k', scale: 1 });
    expect(alignOf({ style: 0 })).toMatchObject({ scale: 0 });
    expect(alignOf({})).toBeUndefined();
    expect(alignOf({ attn: false, adain: false })).toBeUndefined();
  });

  it('aligns on every SD mode, and never on /generate/v1, whose style is a preset', () => {
    for (const pipeline of [
      '/sd/image2image/v1',
      '/sdxl/inpainting/v1',
      '/sd/controlnet/v1',
      '/generate/v2',
    ]) {
      expect(
        nodesOf(compileRequest(pipeline, { attn: true, samples: 2 }), 'StyleAlignedBatchAlign'),
        pipeline,
      ).toHaveLength(1);
    }
    expect(
      nodesOf(compileRequest('/generate/v1', { style: 'fantasy_art' }), 'StyleAlignedBatchAlign'),
    ).toEqual([]);
  });

  it('notes a batch of one, which has nothing to align, and attn: false beside another part', () => {
    expect(compileRequest('/sd/text2image/v1', { style: 0.5 }).notes).toEqual([
      expect.stringMatching(
        /^style: style alignment makes the pictures of one batch share the style of its first/,
      ),
    ]);
    expect(compileRequest('/sd/text2image/v1', { attn: false, adain: true, samples: 2 }).notes).toEqual([
      expect.stringMatching(/^attn: false is not honoured while `adain` or `style` asks for alignment/),
    ]);
  });
});

describe('controlnet inpainting (mask_images)', () => {
  const sizes = {
    imageSizes: {
      init_images: [{ width: 900, height: 600 }],
      mask_images: [
        { width: 90, height: 60 },
        { width: 300, height: 200 },
      ],
    },
  };
  const request = {
    init_images: [url('control-0.png')],
    mask_images: [url('mask.png'), url('control-1.png')],
    strength: 0.6,
    controlnets: ['canny'],
  };

  it('repaints the first control picture under the masks joined, guided by the controlnets, at strength', () => {
    const workflow = compileRequest('/sd/controlnet/v1', request, sizes);
    const [join] = nodesOf(workflow, 'MaskComposite');
    expect(join?.inputs).toMatchObject({ operation: 'add', x: 0, y: 0 });
    // Each mask scaled to the picture first, so the two line up.
    const scaled = [join?.inputs['destination'], join?.inputs['source']].map((link) => {
      const mask = source(workflow, link);
      expect(mask.class_type).toBe('ImageToMask');
      return source(workflow, mask.inputs['image']).inputs;
    });
    for (const scale of scaled) expect(scale).toMatchObject({ width: 900, height: 600 });
    const [conditioning] = nodesOf(workflow, 'InpaintModelConditioning');
    expect(conditioning).toBeDefined();
    // The controlnet's conditioning goes into the inpainting conditioning.
    expect(source(workflow, conditioning?.inputs['positive']).class_type).toBe('ControlNetApplyAdvanced');
    expect(nodesOf(workflow, 'KSampler')[0]?.inputs['denoise']).toBe(0.6);
    // The painting laid back over the picture at its own size.
    const saved = source(workflow, nodesOf(workflow, 'SaveImage')[0]?.inputs['images']);
    expect(saved.class_type).toBe('ImageCompositeMasked');
    expect(source(workflow, saved.inputs['destination']).inputs['image']).toBe('control-0.png');
    expect(workflow.notes).toBeUndefined();
  });

  it('draws from noise without masks, where strength is noted, not used', () => {
    const { mask_images: _masks, ...plain } = request;
    const workflow = compileRequest('/sd/controlnet/v1', plain, sizes);
    expect(nodesOf(workflow, 'InpaintModelConditioning')).toEqual([]);
    expect(nodesOf(workflow, 'KSampler')[0]?.inputs['denoise']).toBe(1);
    expect(workflow.notes).toEqual([
      expect.stringMatching(/^strength: applies where a picture is repainted/),
    ]);
  });
});

describe('the palette of /generate/v3', () => {
  it('names each colour after the nearest common colour, as the eye sees it', () => {
    expect(colourName('#006400')).toBe('dark green');
    expect(colourName('#228B22')).toBe('forest green');
    expect(colourName('#2A8B25')).toBe('forest green');
    expect(colourName('#fff')).toBe('white');
    expect(colourName('#000')).toBe('black');
    expect(colourName('#FFD700')).toBe('gold');
    expect(colourName('#000080')).toBe('navy');
    expect(colourName('#1E3A8A')).toBe('midnight blue');
    expect(colourName('#e6e6fa')).toBe('lavender');
  });

  it("writes the colours after the prompt and the style's words, the frontend's empty slots left out", () => {
    const workflow = compileRequest('/generate/v3', {
      prompt: 'a poster',
      style: null,
      palette: ['#006400', '', '#ffd700', '', ''],
    });
    expect(nodesOf(workflow, 'CLIPTextEncode')[0]?.inputs['text']).toBe(
      'a poster, colour palette: dark green (#006400), gold (#FFD700)',
    );
    const empty = compileRequest('/generate/v3', {
      prompt: 'a poster',
      style: null,
      palette: ['', '', '', '', ''],
    });
    expect(nodesOf(empty, 'CLIPTextEncode')[0]?.inputs['text']).toBe('a poster');
  });
});

describe('/generate/v3 where the original took no notice of a field', () => {
  it('draws from the prompt, noting guidance on Schnell and strength and mask_image without a picture', () => {
    const workflow = compileRequest('/generate/v3', {
      guidance_scale: 3.5,
      strength: 0.4,
      mask_image: url('mask.png'),
    });
    expect(nodesOf(workflow, 'FluxGuidance')).toEqual([]);
    expect(nodesOf(workflow, 'EmptySD3LatentImage')).toHaveLength(1);
    expect(nodesOf(workflow, 'InpaintModelConditioning')).toEqual([]);
    expect(nodesOf(workflow, 'KSampler')[0]?.inputs).toMatchObject({ cfg: 1, denoise: 1 });
    expect(workflow.notes?.map((note) => note.slice(0, note.indexOf(':')))).toEqual([
      'strength',
      'mask_image',
      'guidance_scale',
    ]);
  });

  it('reads guidance_scale on Flux Dev as its own guidance, noting nothing', () => {
    const workflow = compileRequest(
      '/generate/v3',
      { guidance_scale: 3 },
      { checkpoints: { 'flux-dev': 'flux1-dev.safetensors' } },
    );
    expect(nodesOf(workflow, 'FluxGuidance')[0]?.inputs['guidance']).toBe(3);
    expect(workflow.notes).toBeUndefined();
  });
});

describe('face_enhance of /superresolution/v1', () => {
  it("restores the enlarged picture's faces with GFPGAN, as Real-ESRGAN's face_enhance does", () => {
    const workflow = compileRequest('/superresolution/v1', { face_enhance: true, scale_factor: 4 });
    const [restore] = nodesOf(workflow, 'ReActorRestoreFace');
    expect(restore?.inputs).toMatchObject({
      model: 'GFPGANv1.4.pth',
      facedetection: 'retinaface_resnet50',
      visibility: 1,
    });
    expect(source(workflow, restore?.inputs['image']).class_type).toBe('ImageUpscaleWithModel');
    expect(nodesOf(workflow, 'SaveImage')[0]?.inputs['images']).toEqual([restore?.id, 0]);
    expect(nodesOf(compileRequest('/superresolution/v1'), 'ReActorRestoreFace')).toEqual([]);
  });
});

describe("the logo's own prompt", () => {
  it('is written after the prompt, and left out where it only repeats it', () => {
    expect(logoText('flat vector, two colours', 'a coffee cup with the word BEAN')).toBe(
      'flat vector, two colours, a coffee cup with the word BEAN',
    );
    expect(logoText('a coffee cup logo', ' a coffee cup logo ')).toBe('a coffee cup logo');
    expect(logoText('a coffee cup logo', '')).toBe('a coffee cup logo');
    const workflow = compileRequest('/logo/v1', { prompt: 'flat vector', logo_prompt: 'ACME rocket' });
    expect(nodesOf(workflow, 'CLIPTextEncode')[0]?.inputs['text']).toBe('flat vector, ACME rocket');
  });
});

describe("outpainting's fine-tuning fields", () => {
  const picture = { width: 1200, height: 800 };
  const sizes = { imageSizes: { init_image: picture } };

  it('blends over `overlap` of the canvas’s longer side, scaled by strength, and 40 px without it', () => {
    const fields = (extra: Record<string, unknown>) =>
      requestFields('/outpainting/v1', {
        input: validatedRequest('/outpainting/v1', {
          prompt: '',
          init_image: url('init.png'),
          num_inference_steps: 10,
          guidance_scale: 7,
          direction: ['left'],
          ...extra,
        }),
      });
    expect(blendWidth(fields({ overlap: 0.02 }), { width: 1264, height: 800 }, 1)).toBe(25);
    expect(blendWidth(fields({ overlap: 0.02 }), { width: 1264, height: 800 }, 0.5)).toBe(13);
    expect(blendWidth(fields({}), { width: 1264, height: 800 }, 0.5)).toBe(20);
    const workflow = compileRequest('/outpainting/v1', { overlap: 0.05, strength: 1 }, sizes);
    expect(nodesOf(workflow, 'ImagePadForOutpaint')[0]?.inputs['feathering']).toBe(Math.round(0.05 * 1264));
  });

  it('stretches the picture’s edge over the new border before painting it, drawing on the border only, and samples it at strength', () => {
    const workflow = compileRequest(
      '/outpainting/v1',
      { direction: ['right', 'down'], expansion: [100], stretch_area: 0.3, stretch_scale: 2, strength: 0.6 },
      sizes,
    );
    const crops = nodesOf(workflow, 'ImageCrop').map((node) => node.inputs);
    // Right: a band 100 px deep (as deep as a stretch by 2 needs to fill 100 px; 0.3 of the
    // picture would be 360) from the picture's right edge, stretched to 200 px, its outer 100 laid
    // on the border at x = 1200.
    expect(crops[0]).toMatchObject({ x: 1100, y: 0, width: 100, height: 800 });
    expect(crops[1]).toMatchObject({ x: 100, y: 0, width: 100, height: 800 });
    // Down: across the whole grown width, which fills the corner too.
    expect(crops[2]).toMatchObject({ x: 0, y: 700, width: 1300, height: 100 });
    expect(crops[3]).toMatchObject({ x: 0, y: 100, width: 1300, height: 100 });
    const laid = nodesOf(workflow, 'ImageCompositeMasked')
      .filter((node) => node.inputs['mask'] === undefined)
      .map((node) => [node.inputs['x'], node.inputs['y']]);
    expect(laid).toEqual([
      [1200, 0],
      [0, 800],
    ]);
    expect(nodesOf(workflow, 'KSampler')[0]?.inputs['denoise']).toBe(0.6);
    // Without stretching the grey border holds nothing to keep: it is sampled fully.
    expect(
      nodesOf(compileRequest('/outpainting/v1', { strength: 0.6 }, sizes), 'KSampler')[0]?.inputs['denoise'],
    ).toBe(1);
  });

  it("takes the page's value for the half of the stretch a request leaves out, and notes values that stretch nothing", () => {
    const one = compileRequest(
      '/outpainting/v1',
      { direction: ['left'], expansion: [64], stretch_scale: 3 },
      sizes,
    );
    // 0.3 of 1200 is 360; a stretch by 3 fills 64 px from a band of 32.
    expect(nodesOf(one, 'ImageCrop')[0]?.inputs).toMatchObject({ x: 64, width: 32 });
    for (const extra of [{ stretch_area: 0 }, { stretch_scale: 0.5 }]) {
      const none = compileRequest('/outpainting/v1', extra, sizes);
      expect(nodesOf(none, 'ImageCrop')).toEqual([]);
      expect(none.notes, JSON.stringify(extra)).toHaveLength(1);
    }
  });

  it('paints a large canvas in tiles, leaving those wholly inside the picture, and answers the grown canvas', () => {
    const workflow = compileRequest(
      '/outpainting/v1',
      {
        direction: ['left', 'right', 'up', 'down'],
        expansion: [256],
        horizontal_tile: 3,
        vertical_tile: 2,
        samples: 2,
      },
      sizes,
    );
    // The grown canvas is 1712 x 1312: 3 x 2 tiles, every one of which holds some border.
    expect(nodesOf(workflow, 'KSampler')).toHaveLength(6);
    const cuts = nodesOf(workflow, 'CropMask').map((node) => node.inputs);
    expect(
      cuts.every((cut) => Number(cut['width']) >= MIN_TILE_SIDE && Number(cut['height']) >= MIN_TILE_SIDE),
    ).toBe(true);
    const saved = source(workflow, nodesOf(workflow, 'SaveImage')[0]?.inputs['images']);
    expect(saved.class_type).toBe('ImageCompositeMasked');
    expect(workflow.notes).toBeUndefined();
    // One border only: the tiles along the opposite side hold none of it, and are left alone.
    const tiles = outpaintTiles(
      { width: 1264, height: 1600 },
      2,
      3,
      { width: 1200, height: 1600 },
      { left: 64, right: 0, top: 0, bottom: 0 },
      40,
    );
    expect(tiles.map((tile) => tile.x)).toEqual([0, 0, 0]);
    expect(tiles[1]!.y - tiles[0]!.y).toBeLessThan(tiles[0]!.height - TILE_OVERLAP + 1);
  });

  it('paints in as many tiles as the canvas holds, noting a count it cannot', () => {
    const workflow = compileRequest('/outpainting/v1', { horizontal_tile: 3, vertical_tile: 24 }, sizes);
    // 1264 x 800: two tiles across, one down; the right one lies wholly in the picture, whose
    // left side alone grew, so only the left one is painted.
    expect(nodesOf(workflow, 'KSampler')).toHaveLength(1);
    expect(nodesOf(workflow, 'CropMask')[0]?.inputs).toMatchObject({ x: 0, y: 0, width: 664, height: 800 });
    expect(workflow.notes).toEqual([
      'horizontal_tile: 3 along the 1264 px canvas: fewer than one tile paints the canvas in one, and more than it holds (none smaller than 512 px, at most 8 a side) in as many as it holds, here 2',
      'vertical_tile: 24 along the 800 px canvas: fewer than one tile paints the canvas in one, and more than it holds (none smaller than 512 px, at most 8 a side) in as many as it holds, here 1',
    ]);
  });
});
