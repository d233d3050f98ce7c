import { describe, expect, it } from 'vitest';
import {
  buildOpenApi,
  endpointByPath,
  endpoints,
  mergeNotes,
  notedDescription,
  withFieldNotes,
} from '../src/index.ts';
import { IMAGE_PRODUCING_PATHS } from './spec-tables.ts';

type Schema = { properties?: Record<string, { description?: string }> };
type Document = {
  paths: Record<string, { post?: { description?: string } }>;
  components: { schemas: Record<string, Schema> };
};

const notes = {
  pipelines: { '/superresolution/v1': 'On engine X it runs model Y.' },
  fields: { safety_checker: 'Engine X says unsafe above 0.7.' },
};
const plain = buildOpenApi() as unknown as Document;

/** Every description in a document, with the name of the field it is under ('' outside one). */
function descriptions(node: unknown, field = ''): [string, string][] {
  if (Array.isArray(node)) return node.flatMap((item) => descriptions(item, field));
  if (typeof node !== 'object' || node === null) return [];
  return Object.entries(node).flatMap(([key, value]): [string, string][] => {
    if (key === 'description' && typeof value === 'string') return [[field, value]];
    if (key === 'properties' && typeof value === 'object' && value !== null)
      return Object.entries(value).flatMap(([name, property]) => descriptions(property, name));
    return descriptions(value, field);
  });
}
const noted = buildOpenApi({ notes }) as unknown as Document;

describe('the notes a deployment adds to the descriptions', () => {
  it('end the first paragraph of the noted operation, before the paragraphs every task row has', () => {
    const own = plain.paths['/superresolution/v1']?.post?.description ?? '';
    const [first, ...rest] = own.split('\n\n');
    expect(rest.length).toBeGreaterThan(0);
    expect(noted.paths['/superresolution/v1']?.post?.description).toBe(
      [`${first} On engine X it runs model Y.`, ...rest].join('\n\n'),
    );
    // The same text as the endpoint row gives the command line and the playground.
    expect(notedDescription(endpointByPath('/superresolution/v1')!, notes)).toContain(
      'One output: `base64` offered. On engine X it runs model Y.\n\n',
    );
  });

  it('leave every other operation as the contract words it', () => {
    for (const [path, item] of Object.entries(plain.paths)) {
      if (path === '/superresolution/v1') continue;
      expect(noted.paths[path], path).toEqual(item);
    }
  });

  it('follow the field’s description in every schema that has the field, and only there', () => {
    const imageSchemas = new Set(
      endpoints.filter((e) => IMAGE_PRODUCING_PATHS.includes(e.path)).map((e) => e.requestName),
    );
    let count = 0;
    for (const [name, schema] of Object.entries(plain.components.schemas)) {
      const own = schema.properties?.safety_checker?.description;
      const after = noted.components.schemas[name]?.properties?.safety_checker?.description;
      if (own === undefined) {
        expect(after, name).toBeUndefined();
        expect(imageSchemas.has(name), name).toBe(false);
        expect(noted.components.schemas[name], name).toEqual(schema);
        continue;
      }
      count++;
      expect(after, name).toBe(`${own} Engine X says unsafe above 0.7.`);
    }
    expect(count).toBeGreaterThanOrEqual(imageSchemas.size);
  });

  it('scoped to a schema follow the field’s description in the schema of that title alone', () => {
    const scoped = buildOpenApi({
      notes: {
        schemaFields: {
          UpscalerPrompt: { type: 'Engine X has no variation.' },
          Image2PromptSuccessResponse: { prompt: 'Engine X answers tags.' },
        },
      },
    }) as unknown as Document;
    const changed = Object.keys(plain.components.schemas).filter(
      (name) =>
        JSON.stringify(scoped.components.schemas[name]) !== JSON.stringify(plain.components.schemas[name]),
    );
    expect(changed.sort()).toEqual(['Image2PromptSuccessResponse', 'UpscalerPrompt']);
    // Other schemas have a `type` or a `prompt` too, where it means something else.
    const others = Object.entries(plain.components.schemas).filter(([name]) => !changed.includes(name));
    expect(others.some(([, schema]) => schema.properties?.type)).toBe(true);
    expect(others.some(([, schema]) => schema.properties?.prompt)).toBe(true);
    const property = (name: string, field: string) => [
      plain.components.schemas[name]?.properties?.[field]?.description,
      scoped.components.schemas[name]?.properties?.[field]?.description,
    ];
    const [ownType, notedType] = property('UpscalerPrompt', 'type');
    expect(notedType).toBe(`${ownType} Engine X has no variation.`);
    // A response schema too, as its component.
    const [ownPrompt, notedPrompt] = property('Image2PromptSuccessResponse', 'prompt');
    expect(notedPrompt).toBe(`${ownPrompt} Engine X answers tags.`);
    const upscaler = endpointByPath('/upscaler/v1')!.request;
    expect(
      withFieldNotes(upscaler, { schemaFields: { UpscalerPrompt: { type: 'Engine X.' } } }),
    ).toMatchObject({
      properties: { type: { description: `${ownType} Engine X.` } },
    });
    expect(scoped.paths).toEqual(plain.paths);
  });

  it('of several engines come in the order given, both where two note the same thing', () => {
    expect(
      mergeNotes([
        { pipelines: { '/a': 'A1.' }, fields: { f: 'F1.' }, schemaFields: { S: { f: 'S1.' } } },
        undefined,
        {
          pipelines: { '/a': 'A2.', '/b': 'B2.' },
          schemaFields: { S: { f: 'S2.', g: 'G2.' }, T: { f: 'T2.' } },
        },
      ]),
    ).toEqual({
      pipelines: { '/a': 'A1. A2.', '/b': 'B2.' },
      fields: { f: 'F1.' },
      schemaFields: { S: { f: 'S1. S2.', g: 'G2.' }, T: { f: 'T2.' } },
    });
  });
});

describe('the contract’s own descriptions', () => {
  it('name no engine’s weights, packages or thresholds: those are the engines’ notes', () => {
    const text = JSON.stringify(plain);
    for (const word of ['@upscalerjs', 'nsfwjs', '@imgly', 'ISNet', 'Porn + Hentai', 'must show a face']) {
      expect(text, word).not.toContain(word);
    }
  });

  it('say nothing of the cpu engine: only a task’s `engine` field names it, as one of its values', () => {
    expect(JSON.stringify(plain)).not.toMatch(/cpu engine/i);
    const naming = descriptions(plain).filter(([, text]) => /\bcpu\b/i.test(text));
    expect(naming.length).toBeGreaterThan(0);
    for (const [field, text] of naming) expect(field, text).toBe('engine');
  });

  it('state what the safety checker does on every engine', () => {
    const text = plain.components.schemas.Text2ImagePromptSD?.properties?.safety_checker?.description;
    expect(text).toContain('Classify every output image with the NSFW checker before the task succeeds');
    expect(text).toContain('fails the task with `safety_checker: output image N of M was classified unsafe');
  });
});
