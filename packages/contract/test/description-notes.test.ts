import { describe, expect, it } from 'vitest';
import { buildOpenApi, endpointByPath, endpoints, mergeNotes, notedDescription } from '../src/index.ts';
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

  it('of several engines come in the order given, both where two note the same thing', () => {
    expect(
      mergeNotes([
        { pipelines: { '/a': 'A1.' }, fields: { f: 'F1.' } },
        undefined,
        { pipelines: { '/a': 'A2.', '/b': 'B2.' } },
      ]),
    ).toEqual({ pipelines: { '/a': 'A1. A2.', '/b': 'B2.' }, fields: { f: 'F1.' } });
  });
});

describe('the contract’s own descriptions', () => {
  it('name no engine’s weights, packages or thresholds: those are the engines’ notes', () => {
    const text = JSON.stringify(plain);
    for (const word of ['@upscalerjs', 'nsfwjs', '@imgly', 'ISNet', 'Porn + Hentai', 'must show a face']) {
      expect(text, word).not.toContain(word);
    }
  });

  it('state what the safety checker does on every engine', () => {
    const text = plain.components.schemas.Text2ImagePromptSD?.properties?.safety_checker?.description;
    expect(text).toContain('Classify every output image with the NSFW checker before the task succeeds');
    expect(text).toContain('fails the task with `safety_checker: output image N of M was classified unsafe');
  });
});
