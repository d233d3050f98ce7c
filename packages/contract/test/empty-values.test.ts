import { describe, expect, it } from 'vitest';
import { EMPTY_IS_ABSENT_KEYWORD, HTTP_URL_KEYWORD } from '../src/schemas/common.ts';
import { requestSchemas } from './request-schemas.ts';

/**
 * What a form sends for a choice left empty: `""`. The original service's frontend sends
 * `style_image: ""` to /bgchanger/v1 when no background image is chosen, and its Flux palette
 * picker five colours padded with `""`. An optional URL field sent empty is read as left out, and
 * the `""` items of a list whose items stand alone are left out of it; a required field, and a
 * list that pairs with another by position, still refuse them.
 */

type Node = Record<string, unknown>;

const schemaNamed = (name: string) => {
  const found = requestSchemas.find((each) => each.name === name);
  if (!found) throw new Error(`no request schema ${name}`);
  return found;
};

/** Validates the schema's example with `changes` applied (an undefined change removes the field). */
function validated(name: string, changes: Record<string, unknown>) {
  const { example, validate } = schemaNamed(name);
  const body: Node = { ...example, ...changes };
  return validate(body);
}

/** What a validator answers for a refused body: these detail entries. */
const refused = (...detail: Node[]) => ({ ok: false, detail });

const MIN_LENGTH = {
  msg: 'ensure this value has at least 1 characters',
  type: 'value_error.any_str.min_length',
  ctx: { limit_value: 1 },
};

const HEX = '^#(?:[0-9a-fA-F]{3}){1,2}$';
const NOT_HEX = {
  msg: `string does not match regex "${HEX}"`,
  type: 'value_error.str.regex',
  ctx: { pattern: HEX },
};

const branchesOf = (node: Node): Node[] =>
  Array.isArray(node.anyOf) ? (node.anyOf as Node[]).flatMap(branchesOf) : [node];

const isUrl = (node: Node) => branchesOf(node).some((branch) => branch[HTTP_URL_KEYWORD] === true);
const takesEmpty = (node: Node) =>
  branchesOf(node).some((branch) => branch[EMPTY_IS_ABSENT_KEYWORD] === true);
const itemsTakeEmpty = (node: Node) =>
  branchesOf(node).some(
    (branch) => branch.type === 'array' && (branch.items as Node)[EMPTY_IS_ABSENT_KEYWORD] === true,
  );

describe('empty values a form sends for a choice left empty', () => {
  it('reads style_image "" on /bgchanger/v1 as no style image: the stored request has none', () => {
    for (const empty of ['', '  ', '\t\n']) {
      const result = validated('BgChangerPrompt', { style_image: empty });
      expect(result.ok).toBe(true);
      expect(result.ok && 'style_image' in result.value).toBe(false);
    }
  });

  it('still refuses a style_image that is not a URL, with the URL error alone', () => {
    expect(validated('BgChangerPrompt', { style_image: 'ftp://example.com/a.png' })).toEqual(
      refused({
        loc: ['body', 'style_image'],
        msg: 'URL scheme not permitted',
        type: 'value_error.url.scheme',
        ctx: { allowed_schemes: ['http', 'https'] },
      }),
    );
  });

  it('still refuses a required image sent empty, as pydantic does', () => {
    expect(validated('BgChangerPrompt', { init_image: '' })).toEqual(
      refused({ loc: ['body', 'init_image'], ...MIN_LENGTH }),
    );
  });

  it('leaves the "" entries of a five-slot palette out, and keeps the colours in order', () => {
    const padded = validated('StylePrompt', { palette: ['#ff0000', '', '#0f0', '', ''] });
    expect(padded.ok && padded.value.palette).toEqual(['#ff0000', '#0f0']);
    const none = validated('StylePrompt', { palette: ['', '', '', '', ''] });
    expect(none.ok && none.value.palette).toEqual([]);
    // Five colours and a blank: the blank is not a sixth colour.
    const full = validated('StylePrompt', { palette: ['#111', '#222', '', '#333', '#444', '#555'] });
    expect(full.ok && full.value.palette).toEqual(['#111', '#222', '#333', '#444', '#555']);
  });

  it('counts only the colours against the bound of 5', () => {
    expect(
      validated('StylePrompt', { palette: ['', '#111', '#222', '#333', '#444', '#555', '#666'] }),
    ).toEqual(
      refused({
        loc: ['body', 'palette'],
        msg: 'ensure this value has at most 5 items',
        type: 'value_error.list.max_items',
        ctx: { limit_value: 5 },
      }),
    );
  });

  it('names a wrong colour at the place it was sent, blanks before it counted', () => {
    expect(validated('StylePrompt', { palette: ['#fff', '', 'red', '', 'blue'] })).toEqual(
      refused({ loc: ['body', 'palette', 2], ...NOT_HEX }, { loc: ['body', 'palette', 4], ...NOT_HEX }),
    );
  });

  it('leaves "" out of the lists whose entries stand alone: embeddings and style images', () => {
    const url = 'https://images.example.com/style.png';
    const sdxl = validated('Text2ImagePromptSDXL', {
      embeddings: ['', 'my-embedding', ''],
      ip_adapter_style_images: ['', url, '  '],
    });
    expect(sdxl.ok && [sdxl.value.embeddings, sdxl.value.ip_adapter_style_images]).toEqual([
      ['my-embedding'],
      [url],
    ]);
  });

  it('keeps refusing "" in lists that pair with another by position, and in required lists', () => {
    const url = 'https://images.example.com/face.png';
    expect(validated('Text2ImagePromptSDXL', { ip_adapter_mask_images: ['', url] })).toEqual(
      refused({ loc: ['body', 'ip_adapter_mask_images', 0], ...MIN_LENGTH }),
    );
    expect(validated('PhotomakerPrompt', { init_images: [url, ''] })).toEqual(
      refused({ loc: ['body', 'init_images', 1], ...MIN_LENGTH }),
    );
  });

  it('reads "" as left out in every optional URL field of every request, and in no required one', () => {
    const optional: string[] = [];
    for (const { name, schema, validate, example } of requestSchemas) {
      const required = new Set(schema.required ?? []);
      for (const [field, node] of Object.entries(schema.properties)) {
        if (required.has(field)) {
          expect(takesEmpty(node), `${name}.${field} is required`).toBe(false);
          continue;
        }
        if (!isUrl(node)) continue;
        expect(takesEmpty(node), `${name}.${field}`).toBe(true);
        optional.push(`${name}.${field}`);
        const result = validate({ ...example, [field]: '' });
        expect(result.ok, `${name}.${field}: ${JSON.stringify(result)}`).toBe(true);
        expect(result.ok && field in result.value, `${name}.${field}`).toBe(false);
      }
    }
    expect(optional).toEqual(
      expect.arrayContaining([
        'BgChangerPrompt.style_image',
        'StylePrompt.init_image',
        'StylePrompt.mask_image',
        'ModelswitchPrompt.input_face',
        'FaceLockPrompt.supp_image1',
        'Text2ImagePromptSD.ip_adapter_image',
        'Text2ImagePromptSDXL.ip_adapter_image',
        'Text2ImagePromptSD.control_image',
        'Text2ImagePromptSD.webhook',
      ]),
    );
  });

  it('leaves "" items out of exactly the lists whose items stand alone', () => {
    const lists = requestSchemas.flatMap(({ name, schema }) =>
      Object.entries(schema.properties)
        .filter(([, node]) => itemsTakeEmpty(node))
        .map(([field]) => `${name}.${field}`),
    );
    // Each list of the diffusion schemas (text2image, image2image, inpainting, controlnet, Generate),
    // and the palette. Not lora_models (pairs with lora_weights), ip_adapter and the image list form
    // of ip_adapter_image (pair with ip_adapter_scale), ip_adapter_mask_images (one per adapter),
    // mask_images and init_images (one per controlnet), nor any required list.
    const fields = new Set(lists.map((list) => list.split('.')[1]));
    expect([...fields].sort()).toEqual(['embeddings', 'ip_adapter_style_images', 'palette']);
    expect(lists).toContain('StylePrompt.palette');
    expect(lists).toContain('SDXLGenPrompt.embeddings');
  });
});
