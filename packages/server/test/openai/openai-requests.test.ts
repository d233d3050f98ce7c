import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { nearestSize, parseSize } from '../../src/openai/image-sizes.ts';
import {
  DEFAULT_OPENAI_MODELS,
  type OpenAiModelTable,
  openAiModels,
  openAiSettingsFromEnv,
} from '../../src/openai/model-table.ts';
import { useInjectedApi } from '../support/injected-api.ts';

/**
 * The OpenAI Images API's side of things that never reach a task: bodies it refuses (by name, in
 * OpenAI's shape, never a 500), keys (one allowance of wrong keys with the API's own paths), the
 * model table the operator may edit, and the sizes a family maps a request to. The API's own paths
 * answer as they did.
 */

const WRONG = 'ig_0123456789abcdefghijABCDEFGHIJ01';
const LIMITS = { burst: 3, perSecond: 1 };

describe('requests the OpenAI paths refuse', () => {
  const api = useInjectedApi({ authFailureLimits: LIMITS, authClock: () => 1_000_000 });

  const generate = (payload: string | object, headers: Record<string, string> = {}) =>
    api.app.inject({
      method: 'POST',
      url: '/v1/images/generations',
      headers: { authorization: `Bearer ${api.key}`, 'content-type': 'application/json', ...headers },
      payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
    });

  it.each([
    ['not JSON', '{"prompt": ', null, null],
    ['a list', '[{"prompt": "x"}]', null, 'invalid_type'],
    ['no prompt', { model: 'sdxl' }, 'prompt', 'missing_required_parameter'],
    ['a prompt that is a number', { prompt: 7 }, 'prompt', 'invalid_type'],
    ['a blank prompt', { prompt: '   ' }, 'prompt', 'empty_string'],
    ['a prompt of 32,001 characters', { prompt: 'x'.repeat(32_001) }, 'prompt', 'string_above_max_length'],
    ['n as text', { prompt: 'x', n: '2' }, 'n', 'invalid_type'],
    ['n of 2.5', { prompt: 'x', n: 2.5 }, 'n', 'invalid_type'],
    ['n of 0', { prompt: 'x', n: 0 }, 'n', 'integer_below_min_value'],
    ['n of 11', { prompt: 'x', n: 11 }, 'n', 'integer_above_max_value'],
    ['n past what the model draws', { prompt: 'x', n: 5 }, 'n', 'integer_above_max_value'],
    ['a size of 0 × 10', { prompt: 'x', size: '0x10' }, 'size', 'invalid_value'],
    ['a size beyond any', { prompt: 'x', size: '99999x1' }, 'size', 'invalid_value'],
    ['an unknown quality', { prompt: 'x', quality: 'ultra' }, 'quality', 'invalid_value'],
    ['an unknown output format', { prompt: 'x', output_format: 'gif' }, 'output_format', 'invalid_value'],
    [
      'a compression of 101',
      { prompt: 'x', output_compression: 101 },
      'output_compression',
      'integer_above_max_value',
    ],
    ['streaming', { prompt: 'x', stream: true }, 'stream', 'unsupported_value'],
    ['an unknown model', { prompt: 'x', model: 'sdxl-turbo' }, 'model', 'invalid_value'],
    ['a model given as a list', { prompt: 'x', model: ['sdxl'] }, 'model', 'invalid_type'],
  ])('answers 400 for %s', async (_, payload, param, code) => {
    const refused = await generate(payload as string | object);
    expect(refused.statusCode).toBe(400);
    expect(refused.headers['content-type']).toContain('application/json');
    const { error } = refused.json() as { error: Record<string, unknown> };
    expect(error).toMatchObject({ type: 'invalid_request_error', param, code });
    expect(typeof error.message).toBe('string');
  });

  it('answers a body past 1 MiB 413, in its shape', async () => {
    const refused = await generate({ prompt: 'x'.repeat(1100 * 1024) });
    expect(refused.statusCode).toBe(413);
    expect(refused.json()).toMatchObject({ error: { type: 'invalid_request_error' } });
  });

  it('refuses an edit that is no form, a text field for the image, and one without image', async () => {
    const edit = (payload: string, contentType: string) =>
      api.app.inject({
        method: 'POST',
        url: '/v1/images/edits',
        headers: { authorization: `Bearer ${api.key}`, 'content-type': contentType },
        payload,
      });
    const json = await edit(
      '{"prompt": "x", "image": "https://images.example.com/a.png"}',
      'application/json',
    );
    expect(json.statusCode).toBe(400);
    expect(json.json().error).toMatchObject({ code: 'invalid_content_type' });
    const boundary = 'x-boundary';
    const form = (parts: string[]) =>
      `${parts.map((part) => `--${boundary}\r\n${part}\r\n`).join('')}--${boundary}--\r\n`;
    const text = await edit(
      form(['Content-Disposition: form-data; name="image"\r\n\r\nhttps://images.example.com/a.png']),
      `multipart/form-data; boundary=${boundary}`,
    );
    expect(text.json().error).toMatchObject({ param: 'image', code: 'invalid_type' });
    const none = await edit(
      form(['Content-Disposition: form-data; name="prompt"\r\n\r\nmake it night']),
      `multipart/form-data; boundary=${boundary}`,
    );
    expect(none.json().error).toMatchObject({ param: 'image', code: 'missing_required_parameter' });
  });

  it('answers an unknown path under /v1 as OpenAI does, and the API elsewhere as before', async () => {
    const variations = await api.app.inject({
      method: 'POST',
      url: '/v1/images/variations',
      headers: { authorization: `Bearer ${api.key}` },
    });
    expect(variations.statusCode).toBe(404);
    expect(variations.json()).toEqual({
      error: {
        message: 'Invalid URL (POST /v1/images/variations)',
        type: 'invalid_request_error',
        param: null,
        code: null,
      },
    });
    const elsewhere = await api.app.inject({ method: 'GET', url: '/v2/images' });
    expect(elsewhere.statusCode).toBe(404);
    expect(elsewhere.body).toBe('{"detail":"Not Found"}');
    const unkeyed = await api.app.inject({ method: 'POST', url: '/sd/text2image/v1', payload: {} });
    expect(unkeyed.body).toBe('{"detail":"Missing API key: send it in the API-Key header"}');
  });

  it('takes the key in API-Key too, and counts wrong keys here and on the API together', async () => {
    expect(
      (await api.app.inject({ method: 'GET', url: '/v1/models', headers: { 'api-key': api.key } }))
        .statusCode,
    ).toBe(200);
    const from = '203.0.113.80';
    for (let n = 0; n < LIMITS.burst; n++) {
      const url = n % 2 === 0 ? '/v1/models' : '/tasks/v1';
      const wrong = await api.app.inject({
        method: 'GET',
        url,
        remoteAddress: from,
        headers: { authorization: `Bearer ${WRONG}` },
      });
      expect(wrong.statusCode).toBe(401);
    }
    const throttled = await api.app.inject({
      method: 'GET',
      url: '/v1/models',
      remoteAddress: from,
      headers: { authorization: `Bearer ${WRONG}` },
    });
    expect(throttled.statusCode).toBe(429);
    expect(throttled.headers['retry-after']).toBe('1');
    expect(throttled.json()).toEqual({
      error: {
        message: 'Too many invalid API keys from this address: retry after 1 s',
        type: 'rate_limit_exceeded',
        param: null,
        code: 'rate_limit_exceeded',
      },
    });
    expect(
      (
        await api.app.inject({
          method: 'GET',
          url: '/tasks/v1',
          remoteAddress: from,
          headers: { 'api-key': WRONG },
        })
      ).statusCode,
    ).toBe(429);
  });

  it("lets a browser's preflight send OpenAI's SDK headers", async () => {
    const preflight = await api.app.inject({
      method: 'OPTIONS',
      url: '/v1/images/generations',
      headers: {
        origin: 'https://app.example.com',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,content-type,x-stainless-lang',
      },
    });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('*');
    expect(preflight.headers['access-control-allow-headers']).toBe(
      'authorization,content-type,x-stainless-lang',
    );
  });
});

describe('the model table', () => {
  const table = (change: (models: OpenAiModelTable['models'][number][]) => void, other: object = {}) => {
    const models = structuredClone(DEFAULT_OPENAI_MODELS.models) as OpenAiModelTable['models'][number][];
    change(models);
    return { ...DEFAULT_OPENAI_MODELS, models, ...other } as OpenAiModelTable;
  };
  const sdxl = (models: OpenAiModelTable['models'][number][]) => models.find((model) => model.id === 'sdxl')!;

  it('holds the built-in table to every pipeline it names', () => {
    const models = openAiModels(DEFAULT_OPENAI_MODELS);
    expect(models.find(undefined)?.id).toBe('flux-schnell');
    expect(models.find('dall-e-3')?.id).toBe('flux-schnell');
    expect(models.find('sdxl')?.generations).toBe('/sdxl/text2image/v1');
  });

  it.each([
    [
      'a pipeline that does not exist',
      table((m) => Object.assign(sdxl(m), { generations: '/sdxl/text2image/v9' })),
      'model sdxl: generations: /sdxl/text2image/v9 is no generation pipeline',
    ],
    [
      'an edit pipeline without init_image',
      table((m) => Object.assign(sdxl(m), { edits: { image: '/sdxl/text2image/v1' } })),
      'model sdxl: edits.image: /sdxl/text2image/v1 takes no init_image',
    ],
    [
      'a mask pipeline without mask_image',
      table((m) => Object.assign(sdxl(m), { edits: { mask: '/sdxl/image2image/v1' } })),
      'model sdxl: edits.mask: /sdxl/image2image/v1 takes no mask_image',
    ],
    [
      'a size past the pipeline bound',
      table((m) => Object.assign(sdxl(m), { sizes: ['2048x2048'] })),
      'model sdxl: generations: /sdxl/text2image/v1 refuses height (ensure this value is less than or equal to 1536)',
    ],
    [
      'a size that is none',
      table((m) => Object.assign(sdxl(m), { sizes: ['big'] })),
      'model sdxl: the size big is not WIDTHxHEIGHT',
    ],
    [
      'steps of an unknown quality',
      table((m) => Object.assign(sdxl(m), { steps: { ultra: 50 } })),
      'model sdxl: "steps" names no quality ultra',
    ],
    [
      'steps past the bound',
      table((m) => Object.assign(sdxl(m), { steps: { hd: 60 } })),
      'model sdxl: generations: /sdxl/text2image/v1 refuses num_inference_steps',
    ],
    [
      'a field the pipeline refuses',
      table((m) => Object.assign(sdxl(m), { fields: { negative_prompt: '', hires: 'perhaps' } })),
      'model sdxl: generations: /sdxl/text2image/v1 refuses hires',
    ],
    [
      'a name given twice',
      table((m) => Object.assign(sdxl(m), { aliases: ['dall-e-3'] })),
      'the name dall-e-3 is given twice',
    ],
    [
      'a default that is no model',
      table(() => {}, { default: 'nope' }),
      'the default model nope is not in the table',
    ],
    ['no models', { default: 'x', models: [] } as unknown as OpenAiModelTable, 'expected {"default"'],
  ])('refuses %s, saying so', (_, bad, why) => {
    expect(() => openAiModels(bad, 'OPENAI_MODELS=models.json')).toThrow(`OPENAI_MODELS=models.json: ${why}`);
  });

  it('is read from the file OPENAI_MODELS names, with OPENAI_WAIT_SECONDS', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'imagegen-openai-models-'));
    try {
      const file = path.join(dir, 'models.json');
      const own = {
        default: 'house',
        models: [{ ...DEFAULT_OPENAI_MODELS.models[1], id: 'house', aliases: ['dall-e-3'] }],
      };
      await writeFile(file, JSON.stringify(own));
      const settings = openAiSettingsFromEnv({ OPENAI_MODELS: file, OPENAI_WAIT_SECONDS: '60' });
      expect(settings.waitMs).toBe(60_000);
      expect(settings.models.names).toEqual(['house', 'dall-e-3']);
      expect(openAiSettingsFromEnv({}).waitMs).toBe(300_000);
      expect(() => openAiSettingsFromEnv({ OPENAI_MODELS: path.join(dir, 'missing.json') })).toThrow(
        `OPENAI_MODELS=${path.join(dir, 'missing.json')}: ENOENT`,
      );
      expect(() => openAiSettingsFromEnv({ OPENAI_WAIT_SECONDS: '0' })).toThrow(
        'OPENAI_WAIT_SECONDS=0 is not',
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('sizes', () => {
  const family = ['1024x1024', '1216x832', '832x1216', '1344x768'].map((text) => parseSize(text)!);
  it.each([
    ['1024x1024', '1024x1024'],
    ['256x256', '1024x1024'],
    ['1536x1024', '1216x832'],
    ['1024x1536', '832x1216'],
    ['1792x1024', '1344x768'],
    ['4000x1000', '1344x768'],
  ])('maps %s to %s: nearest in shape, then in area', (asked, mapped) => {
    const size = nearestSize(parseSize(asked)!, family);
    expect(`${size.width}x${size.height}`).toBe(mapped);
  });

  it('reads WIDTHxHEIGHT, any case, blanks around, and nothing else', () => {
    expect(parseSize(' 512 X 768 ')).toEqual({ width: 512, height: 768 });
    for (const bad of ['512', '512x', 'x512', '-1x5', '512x512x2', '0x512', '16385x16'])
      expect(parseSize(bad)).toBeNull();
  });
});
