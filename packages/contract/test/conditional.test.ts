import { describe, expect, it } from 'vitest';
import { compileRequestValidator, endpointByPath } from '../src/index.ts';

function validator(path: string) {
  const endpoint = endpointByPath(path);
  if (!endpoint) throw new Error(path);
  return compileRequestValidator(endpoint);
}

const load = validator('/load_model/v1');
const loadBody = {
  model_name: 'm',
  pretrained_model_path: null,
  model_url: null,
  base_model: 'sd1.5',
  model_type: 'lora',
  description: 'd',
  sample_images: [],
  visibility: 'public',
};
const missing = (field: string) => ({
  loc: ['body', field],
  msg: 'field required',
  type: 'value_error.missing',
});

describe("the API reference's conditional rules", () => {
  it('requires model_extension when model_url is given', () => {
    const result = load({ ...loadBody, model_url: 'https://models.example.com/m.safetensors' });
    expect(result).toEqual({ ok: false, detail: [missing('model_extension')] });
  });

  it('does not require model_extension when model_url is null', () => {
    expect(load({ ...loadBody, pretrained_model_path: 'org/model' })).toMatchObject({ ok: true });
  });

  it('accepts model_url with model_extension', () => {
    const body = { ...loadBody, model_url: 'https://models.example.com/m.ckpt', model_extension: 'ckpt' };
    expect(load(body)).toMatchObject({ ok: true });
  });

  it('requires revision for a checkpoint and not for a lora or an embedding', () => {
    expect(load({ ...loadBody, model_type: 'checkpoint' })).toEqual({
      ok: false,
      detail: [missing('revision')],
    });
    expect(load({ ...loadBody, model_type: 'checkpoint', revision: 'fp32' })).toMatchObject({ ok: true });
    expect(load({ ...loadBody, model_type: 'embedding' })).toMatchObject({ ok: true });
  });

  it('reports both conditional fields, in field order, with the other errors', () => {
    const result = load({
      ...loadBody,
      model_type: 'checkpoint',
      model_url: 'https://models.example.com/m.ckpt',
      visibility: 'secret',
    });
    expect(result.ok ? [] : result.detail.map((entry) => entry.loc[1])).toEqual([
      'visibility',
      'model_extension',
      'revision',
    ]);
  });

  it('still requires model_url and pretrained_model_path, which may be null but not absent', () => {
    const { model_url: _u, pretrained_model_path: _p, ...rest } = loadBody;
    expect(load(rest)).toEqual({
      ok: false,
      detail: [missing('pretrained_model_path'), missing('model_url')],
    });
  });

  describe('palette', () => {
    const style = validator('/generate/v3');
    const palette = (colours: unknown[]) => style({ prompt: 'a poster', palette: colours });

    it('accepts up to 5 hex colours, short and long form', () => {
      expect(palette(['#fff', '#000000', '#1d3557', '#E63946', '#abc'])).toMatchObject({ ok: true });
    });

    it('rejects a sixth colour', () => {
      expect(palette(['#fff', '#fff', '#fff', '#fff', '#fff', '#fff'])).toEqual({
        ok: false,
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

    it('rejects a colour that is not hex, naming the regex', () => {
      const result = palette(['#fff', 'red']);
      expect(result.ok ? [] : result.detail).toEqual([
        {
          loc: ['body', 'palette', 1],
          msg: 'string does not match regex "^#(?:[0-9a-fA-F]{3}){1,2}$"',
          type: 'value_error.str.regex',
          ctx: { pattern: '^#(?:[0-9a-fA-F]{3}){1,2}$' },
        },
      ]);
    });
  });
});
