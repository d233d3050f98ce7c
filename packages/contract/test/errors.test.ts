import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  compileRequestValidator,
  compileUncutBodyValidator,
  endpointByPath,
  endpoints,
  jsonDecodeErrorDetail,
  MAX_DETAIL_ENTRIES,
  parseJsonBody,
} from '../src/index.ts';

interface GoldenCase {
  path: string;
  body?: unknown;
  raw?: string;
  response: { detail: unknown[] };
}

const golden: Record<string, GoldenCase> = JSON.parse(
  readFileSync(new URL('./fixtures/validation-errors.golden.json', import.meta.url), 'utf8'),
);

function validatorFor(path: string) {
  const endpoint = endpointByPath(path);
  if (!endpoint) throw new Error(`no endpoint ${path}`);
  return compileRequestValidator(endpoint);
}

/** What the server answers for a raw body: parse, then validate. */
function answer(path: string, raw: string): { detail: unknown[] } | 'accepted' {
  const parsed = parseJsonBody(raw);
  if (!parsed.ok) return { detail: parsed.detail };
  const result = validatorFor(path)(parsed.value);
  return result.ok ? 'accepted' : { detail: result.detail };
}

describe('422 bodies match FastAPI with pydantic v1 (golden file)', () => {
  it.each(Object.entries(golden))('%s', (_name, golden) => {
    const raw = golden.raw ?? JSON.stringify(golden.body);
    // Compared as serialised JSON so that key order matters too, as it does on the wire.
    expect(JSON.stringify(answer(golden.path, raw))).toBe(JSON.stringify(golden.response));
  });
});

const t2i = validatorFor('/sd/text2image/v1');
const base = { prompt: 'a cat', negative_prompt: '' };

function detailOf(body: unknown) {
  const result = t2i(body);
  if (result.ok) throw new Error('expected a validation error');
  return result.detail;
}

describe('many errors at once', () => {
  const cpuMs = (work: () => void) => {
    const start = process.cpuUsage();
    work();
    const used = process.cpuUsage(start);
    return (used.user + used.system) / 1000;
  };
  const weights = (count: number) =>
    `{"prompt":"x","negative_prompt":"y","samples":9,"lora_weights":[${new Array(count).fill('1e400').join(',')}]}`;

  it('answers the first entries in pydantic order, at most MAX_DETAIL_ENTRIES of them', () => {
    const result = answer('/sd/text2image/v1', weights(3000));
    if (result === 'accepted') throw new Error('accepted');
    expect(result.detail).toHaveLength(MAX_DETAIL_ENTRIES);
    expect(result.detail[0]).toMatchObject({ loc: ['body', 'samples'] });
    expect(result.detail[1]).toMatchObject({
      loc: ['body', 'lora_weights', 0],
      type: 'value_error.number.not_le',
    });
    expect(result.detail.at(-1)).toMatchObject({ loc: ['body', 'lora_weights', MAX_DETAIL_ENTRIES - 2] });
    // A few hundred wrong values are all answered.
    const some = answer('/sd/text2image/v1', weights(300));
    expect(some !== 'accepted' && some.detail).toHaveLength(301);
  });

  it('writes the detail in time proportional to the errors (50,000 took 19 s when each rescanned the rest)', () => {
    // Every item checked, as for a body without long lists: the detail list is built whole.
    const endpoint = endpointByPath('/sd/text2image/v1')!;
    const validate = compileUncutBodyValidator(endpoint.request!);
    const small = weights(5_000);
    const large = weights(50_000);
    const check = (text: string) => () => {
      const parsed = parseJsonBody(text);
      if (parsed.ok) validate(parsed.value);
    };
    check(small)();
    const smallMs = Math.max(1, cpuMs(check(small)));
    const largeMs = cpuMs(check(large));
    expect(largeMs).toBeLessThan(3_000);
    // Ten times the errors: linear is 10 times the time, the square 100 times; a busy machine adds noise.
    expect(largeMs / smallMs).toBeLessThan(40);
  });

  it('answers a list far over its length bound with the one length error, whatever its items', () => {
    const palette = `{"prompt":"x","palette":[${new Array(50_000).fill('"nope"').join(',')}]}`;
    // The Flux generator's StylePrompt takes at most 5 colours.
    const flux = endpoints.find(
      (e) =>
        (e.request as { properties?: object } | undefined)?.properties &&
        'palette' in (e.request as { properties: object }).properties,
    )!;
    const results: ReturnType<typeof answer>[] = [];
    expect(cpuMs(() => results.push(answer(flux.path, palette)))).toBeLessThan(1_000);
    expect(results[0]).toEqual({
      detail: [
        {
          loc: ['body', 'palette'],
          msg: 'ensure this value has at most 5 items',
          type: 'value_error.list.max_items',
          ctx: { limit_value: 5 },
        },
      ],
    });
  });
});

describe('bodies with long lists', () => {
  const cases: Record<string, [path: string, body: () => Record<string, unknown>]> = {
    'every item wrong': [
      '/sd/text2image/v1',
      () => ({ prompt: 'x', negative_prompt: 'y', lora_weights: Array(5000).fill(Number.POSITIVE_INFINITY) }),
    ],
    'wrong items only past the first cut': [
      '/sd/text2image/v1',
      () => ({
        prompt: 'x',
        negative_prompt: 'y',
        lora_weights: [...Array(4500).fill(0.5), ...Array(3000).fill(99)],
      }),
    ],
    'a few wrong items far in': [
      '/sd/text2image/v1',
      () => ({ prompt: 'x', negative_prompt: 'y', embeddings: [...Array(30_000).fill('ok'), {}, [], 3] }),
    ],
    'two long lists and a wrong field after them': [
      '/sd/text2image/v1',
      () => ({
        prompt: 'x',
        negative_prompt: 'y',
        lora_models: Array(2500).fill(null),
        lora_weights: Array(2500).fill('heavy'),
        scheduler: 'nope',
      }),
    ],
    'a wrong field before a long list': [
      '/sd/text2image/v1',
      () => ({ prompt: [], negative_prompt: 'y', samples: 0, controlnets: Array(3000).fill('x') }),
    ],
    'a list over its length bound': [
      '/sdxl/text2image/v1',
      () => ({ prompt: 'x', negative_prompt: 'y', ip_adapter_style_images: Array(4000).fill('http://') }),
    ],
    'a union of a URL and a list of URLs': [
      '/sdxl/text2image/v1',
      () => ({ prompt: 'x', negative_prompt: 'y', ip_adapter_image: Array(3000).fill('not a url') }),
    ],
    'a valid long list': [
      '/sd/text2image/v1',
      () => ({ prompt: 'x', negative_prompt: 'y', lora_weights: Array(5000).fill(1) }),
    ],
  };

  it.each(Object.entries(cases))('%s: answers what checking every item answers', (_name, [path, body]) => {
    const endpoint = endpointByPath(path)!;
    const cut = compileRequestValidator(endpoint)(body());
    const uncut = compileUncutBodyValidator(endpoint.request!)(body());
    expect(cut).toEqual(uncut);
  });

  it('checks a megabyte of wrong items in about what a thousand of them cost', () => {
    const validate = compileRequestValidator(endpointByPath('/sd/text2image/v1')!);
    const body = () => ({ prompt: 'x', negative_prompt: 'y', controlnets: Array(250_000).fill('x') });
    validate(body());
    const start = process.cpuUsage();
    const result = validate(body());
    const used = process.cpuUsage(start);
    expect(result.ok || result.detail).toHaveLength(MAX_DETAIL_ENTRIES);
    // Every item checked took over a second here; the cut takes a few ms (a busy machine: more).
    expect((used.user + used.system) / 1000).toBeLessThan(300);
  });
});

describe('pydantic v1 words for values it cannot convert to the field type', () => {
  it.each([
    ['samples', '2.5', 'value is not a valid integer', 'type_error.integer'],
    ['samples', Number.NaN, 'value is not a valid integer', 'type_error.integer'],
    ['guidance_scale', 'abc', 'value is not a valid float', 'type_error.float'],
    ['prompt', [], 'str type expected', 'type_error.str'],
    ['hires', 2, 'value could not be parsed to a boolean', 'type_error.bool'],
    ['lora_models', 'a,b', 'value is not a valid list', 'type_error.list'],
    ['samples', null, 'none is not an allowed value', 'type_error.none.not_allowed'],
  ])('%s = %j answers "%s"', (field, value, msg, type) => {
    expect(detailOf({ ...base, [field]: value })).toEqual([{ loc: ['body', field], msg, type }]);
  });

  it('answers "value is not a valid dict" for a body that is not an object', () => {
    expect(detailOf(['a'])).toEqual([
      { loc: ['body'], msg: 'value is not a valid dict', type: 'type_error.dict' },
    ]);
  });

  it('answers "field required" at body for a missing body', () => {
    expect(detailOf(undefined)).toEqual([
      { loc: ['body'], msg: 'field required', type: 'value_error.missing' },
    ]);
  });

  it('reports an enumeration given a number as an enumeration error', () => {
    expect(detailOf({ ...base, scheduler: 3 })[0]).toMatchObject({
      loc: ['body', 'scheduler'],
      type: 'type_error.enum',
    });
  });

  it('reports both union members for an SDXL ip_adapter_image that is neither string nor list', () => {
    const result = validatorFor('/sdxl/text2image/v1')({ ...base, ip_adapter_image: {} });
    expect(result.ok ? [] : result.detail).toEqual([
      { loc: ['body', 'ip_adapter_image'], msg: 'str type expected', type: 'type_error.str' },
      { loc: ['body', 'ip_adapter_image'], msg: 'value is not a valid list', type: 'type_error.list' },
    ]);
  });

  it('reads a number for an SDXL ip_adapter_image as the URL "5", then tries the list member', () => {
    const result = validatorFor('/sdxl/text2image/v1')({ ...base, ip_adapter_image: 5 });
    expect(result.ok ? [] : result.detail).toEqual([
      {
        loc: ['body', 'ip_adapter_image'],
        msg: 'invalid or missing URL scheme',
        type: 'value_error.url.scheme',
      },
      { loc: ['body', 'ip_adapter_image'], msg: 'value is not a valid list', type: 'type_error.list' },
    ]);
  });

  it('accepts null on nullable fields and on fields whose default is None, and rejects it elsewhere', () => {
    const generate = validatorFor('/generate/v1');
    expect(generate({ prompt: 'a', negative_prompt: null, lora_models: null })).toMatchObject({
      ok: true,
      value: { negative_prompt: null, lora_models: null },
    });
    // pydantic v1 makes a field whose default is None Optional: null is the field left out.
    const optional = t2i({ ...base, lora_models: null, clip_skip: null });
    expect(optional).toMatchObject({ ok: true });
    expect(optional.ok && Object.keys(optional.value)).not.toContain('lora_models');
    expect(t2i({ ...base, hires: null })).toMatchObject({ ok: false });
  });
});

describe('what a valid body becomes', () => {
  it('drops unknown fields, as pydantic v1 ignores extras', () => {
    const result = t2i({ ...base, not_a_field: 1, __proto_pollution: { x: 1 } });
    expect(result.ok).toBe(true);
    if (result.ok) {
      expect(result.value).not.toHaveProperty('not_a_field');
      expect(result.value).not.toHaveProperty('__proto_pollution');
    }
  });

  it('keeps the values the caller sent over the defaults', () => {
    const result = t2i({ ...base, samples: 3, scheduler: 'LCMScheduler', seed: 42 });
    expect(result).toMatchObject({ ok: true, value: { samples: 3, scheduler: 'LCMScheduler', seed: 42 } });
  });
});

interface FieldSchema {
  type?: string;
  anyOf?: FieldSchema[];
}

function isListOnly(schema: FieldSchema | undefined): boolean {
  if (schema?.type === 'array') return true;
  return schema?.anyOf?.every((branch) => branch.type === 'array' || branch.type === 'null') ?? false;
}

describe('image URLs follow pydantic AnyHttpUrl', () => {
  const img2img = validatorFor('/sd/image2image/v1');
  const urlError = (init_image: unknown) => {
    const result = img2img({ ...base, init_image });
    return result.ok ? undefined : result.detail;
  };

  it('accepts http and https URLs', () => {
    expect(urlError('http://images.example.com/a.png')).toBeUndefined();
    expect(urlError('https://images.example.com:8443/a.png?x=1')).toBeUndefined();
  });

  it('rejects a URL without a scheme', () => {
    expect(urlError('images.example.com/a.png')).toEqual([
      { loc: ['body', 'init_image'], msg: 'invalid or missing URL scheme', type: 'value_error.url.scheme' },
    ]);
  });

  it('rejects a scheme other than http and https, naming the allowed ones', () => {
    for (const url of ['ftp://images.example.com/a.png', 'file:///etc/passwd', 'data://x']) {
      expect(urlError(url)).toEqual([
        {
          loc: ['body', 'init_image'],
          msg: 'URL scheme not permitted',
          type: 'value_error.url.scheme',
          ctx: { allowed_schemes: ['http', 'https'] },
        },
      ]);
    }
  });

  it('rejects a URL without a host, a bad host and a port above 65535', () => {
    expect(urlError('http://')).toEqual([
      { loc: ['body', 'init_image'], msg: 'URL host invalid', type: 'value_error.url.host' },
    ]);
    expect(urlError('http://-bad-.example/a.png')?.[0]?.type).toBe('value_error.url.host');
    expect(urlError('http://example.com:70000/a.png')).toEqual([
      {
        loc: ['body', 'init_image'],
        msg: 'URL port invalid, port cannot exceed 65535',
        type: 'value_error.url.port',
      },
    ]);
  });

  it('wants a top-level domain on a domain host, as HttpUrl does, but none on an address', () => {
    // Answers recorded from pydantic 1.10's HttpUrl.
    for (const url of ['http://localhost/x.png', 'https://example.c/x', 'http://foo.co1/x']) {
      expect(urlError(url)).toEqual([
        {
          loc: ['body', 'init_image'],
          msg: 'URL host invalid, top level domain required',
          type: 'value_error.url.host',
        },
      ]);
    }
    for (const url of [
      'http://127.0.0.1:5/a',
      'http://a.b.com.',
      'http://münchen.de/x',
      'http://xn--mnchen-3ya.de',
    ]) {
      expect(urlError(url)).toBeUndefined();
    }
  });

  it('rejects an empty URL and one over 2083 characters, measured without surrounding whitespace', () => {
    const longest = `https://example.com/${'a'.repeat(2083 - 20)}`;
    expect(longest).toHaveLength(2083);
    for (const empty of ['', '  \t ']) {
      expect(urlError(empty)).toEqual([
        {
          loc: ['body', 'init_image'],
          msg: 'ensure this value has at least 1 characters',
          type: 'value_error.any_str.min_length',
          ctx: { limit_value: 1 },
        },
      ]);
    }
    expect(urlError(longest)).toBeUndefined();
    expect(urlError(` ${longest}\n`)).toBeUndefined();
    // The length is checked first: a URL too long answers that alone, whatever else is wrong with it.
    for (const tooLong of [`${longest}a`, `ftp://${'a'.repeat(2084 - 6)}`]) {
      expect(urlError(tooLong)).toEqual([
        {
          loc: ['body', 'init_image'],
          msg: 'ensure this value has at most 2083 characters',
          type: 'value_error.any_str.max_length',
          ctx: { limit_value: 2083 },
        },
      ]);
    }
  });

  it('checks every image field of every endpoint, in lists too', async () => {
    const { endpoints } = await import('../src/index.ts');
    for (const endpoint of endpoints) {
      if (!endpoint.request) continue;
      const validate = compileRequestValidator(endpoint);
      const example = endpoint.example as Record<string, unknown>;
      for (const field of endpoint.imageFields) {
        const schema = (endpoint.request as { properties: Record<string, FieldSchema> }).properties[field];
        const bad = isListOnly(schema) ? ['ftp://x.example.com/a.png'] : 'ftp://x.example.com/a.png';
        const result = validate({ ...structuredClone(example), [field]: bad });
        expect(result.ok, `${endpoint.path} ${field}`).toBe(false);
        if (!result.ok) expect(result.detail[0]?.type).toBe('value_error.url.scheme');
      }
    }
  });
});

describe('invalid JSON', () => {
  it.each([
    ['', 'Expecting value', 0],
    ['{', 'Expecting property name enclosed in double quotes', 1],
    ['{"a" 1}', "Expecting ':' delimiter", 5],
    ['{"a": 1 "b": 2}', "Expecting ',' delimiter", 8],
    ['[1, 2,]', 'Expecting value', 6],
    ['{"a": 1} x', 'Extra data', 9],
    ['{"a": "b', 'Unterminated string starting at', 6],
    ['{"a": "\\x"}', 'Invalid \\escape', 7],
    ['{"a": "b\nc"}', 'Invalid control character at', 8],
  ])('%j answers "%s" at %i, like Python\'s json module', (raw, msg, pos) => {
    const parsed = parseJsonBody(raw);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.detail[0]).toMatchObject({ loc: ['body', pos], ctx: { msg, pos } });
  });

  it('counts lines and columns from 1, as JSONDecodeError does', () => {
    const [entry] = jsonDecodeErrorDetail('Expecting value', 8, '{\n "a":\n}');
    expect(entry).toEqual({
      loc: ['body', 8],
      msg: 'Expecting value: line 3 column 1 (char 8)',
      type: 'value_error.jsondecode',
      ctx: { msg: 'Expecting value', doc: '{\n "a":\n}', pos: 8, lineno: 3, colno: 1 },
    });
  });
});

describe('query parameters', () => {
  it('reads the images listing limit from text, fills its default and bounds it from 1 to 100', async () => {
    const { compileValidator } = await import('../src/index.ts');
    const schema = endpointByPath('/images/v1')?.query;
    if (!schema) throw new Error('no query schema for /images/v1');
    const query = compileValidator(schema, 'query');
    expect(query({})).toEqual({ ok: true, value: { limit: 20 } });
    expect(query({ limit: '100', before: 'img_1', other: 'x' })).toEqual({
      ok: true,
      value: { limit: 100, before: 'img_1' },
    });
    expect(query({ limit: '0' })).toEqual({
      ok: false,
      detail: [
        {
          loc: ['query', 'limit'],
          msg: 'ensure this value is greater than or equal to 1',
          type: 'value_error.number.not_ge',
          ctx: { limit_value: 1 },
        },
      ],
    });
    expect(query({ limit: '101' })).toMatchObject({
      ok: false,
      detail: [{ type: 'value_error.number.not_le' }],
    });
    expect(query({ limit: 'ten' })).toMatchObject({ ok: false, detail: [{ type: 'type_error.integer' }] });
  });
});

describe('path parameters', () => {
  it('reads them as text, keeps only the declared ones and locates a missing one at ["path", name]', async () => {
    const { compileValidator } = await import('../src/index.ts');
    const schema = endpointByPath('/images/v1/{image_id}')?.params;
    if (!schema) throw new Error('no path schema for /images/v1/{image_id}');
    const path = compileValidator(schema, 'path');
    expect(path({ image_id: 'not-a-uuid', other: 'x' })).toEqual({
      ok: true,
      value: { image_id: 'not-a-uuid' },
    });
    expect(path({})).toEqual({
      ok: false,
      detail: [{ loc: ['path', 'image_id'], msg: 'field required', type: 'value_error.missing' }],
    });
  });
});
