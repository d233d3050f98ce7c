import { describe, expect, it } from 'vitest';
import {
  FACE_CHECKED_FIELDS,
  NSFW_UNSAFE_RULE,
  SUPERRESOLUTION_MODEL_MAP,
  UPSCALER_DEBLUR,
} from '../src/engine-notes.ts';
import { buildOpenApi, endpoints } from '../src/index.ts';
import { SUPERRESOLUTION_MODELS } from '../src/schemas/index.ts';
import { IMAGE_PRODUCING_PATHS } from './spec-tables.ts';

type Schema = { properties?: Record<string, { description?: string }> };

const doc = buildOpenApi({ serverUrl: 'https://api.imagegen.dev' }) as unknown as {
  paths: Record<string, { post?: { description?: string } }>;
  components: { schemas: Record<string, Schema> };
};

function description(path: string): string {
  const text = doc.paths[path]?.post?.description;
  if (!text) throw new Error(`${path} has no description`);
  return text;
}

describe('the cpu engine notes in the OpenAPI document', () => {
  it('maps every superresolution model_name of the API reference, and nothing else, to a shipped ESRGAN model', () => {
    expect(Object.keys(SUPERRESOLUTION_MODEL_MAP).sort()).toEqual([...SUPERRESOLUTION_MODELS].sort());
    for (const choice of Object.values(SUPERRESOLUTION_MODEL_MAP)) {
      expect(choice.package).toBe(`@upscalerjs/esrgan-${choice.size}`);
    }
  });

  it('states the superresolution mapping, the scale rule and what fails', () => {
    const text = description('/superresolution/v1');
    for (const [name, choice] of Object.entries(SUPERRESOLUTION_MODEL_MAP)) {
      expect(text).toContain(`\`${name}\` → \`${choice.package}\``);
    }
    expect(text).toContain('smallest native scale (x2, x3 or x4) at or above `scale_factor`');
    expect(text).toContain('`face_enhance: true` fails the task');
    expect(text).toContain('the hash of an uploaded model');
  });

  it('says what deblur runs on and that variation fails on the cpu engine', () => {
    const text = description('/upscaler/v1');
    expect(text).toContain(
      `\`@upscalerjs/esrgan-${UPSCALER_DEBLUR.size}\` at native x${UPSCALER_DEBLUR.scale}`,
    );
    expect(text).toContain('`prompt` is not used');
    expect(text).toContain('`variation` needs a diffusion model: on the cpu engine it fails the task');
  });

  it('says plainly that image2prompt answers with tags, not a caption', () => {
    expect(description('/image2prompt/v1')).toContain(
      'The cpu engine answers with a tag-style description, not a caption',
    );
  });

  it('says what every background-removal option does, in the operation and in its field', () => {
    const text = description('/bgremover/v1');
    const fields = doc.components.schemas.BgRemoverPrompt?.properties ?? {};
    for (const option of [
      'only_mask',
      'mask_background',
      'post_process_mask',
      'alpha_matting',
      'face_mask',
    ]) {
      expect(text, option).toContain(`\`${option}\``);
      expect(fields[option]?.description, option).toBeTruthy();
    }
  });

  it('tells every face pipeline which inputs must show a face', () => {
    expect(Object.keys(FACE_CHECKED_FIELDS).sort()).toEqual([
      '/facelock/v1',
      '/facelock/v2',
      '/faceswap/v1',
      '/instamodel/v1',
      '/photomaker/v1',
    ]);
    for (const [path, fields] of Object.entries(FACE_CHECKED_FIELDS)) {
      const text = description(path);
      for (const field of fields) expect(text, path).toContain(`\`${field}\``);
      expect(text, path).toContain('fails the task at once, before any generation runs');
    }
  });

  it('gives safety_checker the unsafe rule and the failure on every schema that has the field', () => {
    const withField = Object.entries(doc.components.schemas)
      .filter(([, schema]) => schema.properties?.safety_checker)
      .map(([name]) => name)
      .sort();
    const imageSchemas = endpoints
      .filter((e) => IMAGE_PRODUCING_PATHS.includes(e.path) && e.requestName)
      .map((e) => e.requestName);
    // A component no path takes (StableCascadePrompt) keeps the field's text too.
    const served = new Set(endpoints.map((e) => e.requestName));
    expect(withField.filter((name) => served.has(name))).toEqual([...new Set(imageSchemas)].sort());
    for (const name of withField) {
      const text = doc.components.schemas[name]?.properties?.safety_checker?.description ?? '';
      expect(text, name).toContain(
        `Porn + Hentai ≥ ${NSFW_UNSAFE_RULE.explicit} or Sexy ≥ ${NSFW_UNSAFE_RULE.sexy}`,
      );
      expect(text, name).toContain(
        'the task fails with `safety_checker: output image N of M was classified unsafe',
      );
    }
  });
});
