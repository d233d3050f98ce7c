import { beforeAll, describe, expect, it } from 'vitest';
import { SearchIndex, type SearchParams } from '../src/search-index.ts';
import { builtDocsRecords } from './support/built-docs.ts';

/**
 * Relevance over the real built docs: each query is written from the pages' content, and the
 * page a reader wants must come first (or, where several pages answer, fill the first places).
 */
const PARAMS: Omit<SearchParams, 'query'> = {
  page: 0,
  hitsPerPage: 20,
  attributesToRetrieve: ['url', 'type', 'hierarchy'],
  attributesToHighlight: [],
  attributesToSnippet: [],
  highlightPreTag: '<mark>',
  highlightPostTag: '</mark>',
  snippetEllipsisText: '…',
  facetFilters: [['language:en'], ['docusaurus_tag:default', 'docusaurus_tag:docs-default-current']],
  facets: [],
  distinct: true,
};

/** [query, the page (path) the first hit must be on, why] */
const FIRST: [string, string, string][] = [
  ['facelok', '/Pipelines/Face Control/Face lock', 'a typo of the page title'],
  ['face lock', '/Pipelines/Face Control/Face lock', 'the page title'],
  ['controlnet sdxl', '/Controlnets/ControlNets-SDXL', 'singular of the title word, and the family'],
  ['controlnets sd1.5', '/Controlnets/ControlNets-SD1.5', 'the title with its version'],
  ['outpainting', '/Pipelines/Outpainting', 'the page title'],
  ['upscale', '/Pipelines/Upscale', 'the page title'],
  ['superresolutoin', '/Specialized Models/Superresolution', 'two typos in a long word'],
  ['shedulers', '/Parameters/Schedulers', 'a missing letter'],
  ['hires fix', '/Parameters/Hi-res Fix', 'the hyphenated title typed without its hyphen'],
  ['nsfw', '/Parameters/NSFW-check', 'an acronym in the title'],
  ['prompt guide', '/Parameters/prompt-guide', 'the page title'],
  ['flux schnell', '/Optimised-base-models/Flux-Schnell', 'a model name'],
  ['photom', '/Pipelines/Face Control/Photomaker', 'the prefix typed so far'],
  ['quick swap', '/Pipelines/Face Control/Quick-swap', 'the page title'],
  ['instant model', '/Pipelines/Face Control/Instamodel', 'the title of the Instamodel page'],
  ['try on dress', '/Pipelines/Fashion/virtual-try-on-dress', 'words of the title'],
  ['lower body', '/Pipelines/Fashion/virtual-try-on-lower-body', 'words of the title'],
  ['relight', '/Specialized Models/Relight', 'the page title'],
  ['remove background', '/Specialized Models/Remove & Change Background', 'words of the title'],
  ['train models', '/Custom-upload/Train-models', 'the page title'],
  ['get all models', '/Custom-upload/Get-all-models', 'the page title'],
  ['api changes', '/Enterprise/API Changes', 'the page title'],
  ['lora sdxl', '/Specialized Models/Custom-LoRA/sdxl', 'an adapter kind and the family'],
  ['embeddings sd1.5', '/Specialized Models/Custom-Embeddings/sd1.5', 'an adapter kind and the family'],
  ['lightning', '/Specialized Models/Lightning-models', 'the page title'],
  ['hidiffusion', '/Parameters/Hidiffusion', 'the page title, in one word'],
  ['id_scale', '/Pipelines/Face Control/Face lock', 'a parameter only face lock has'],
  ['model switch', '/Pipelines/Fashion/Model-Switch', 'the page title'],
];

describe('search relevance over the built docs', () => {
  let index: SearchIndex;
  beforeAll(async () => {
    index = new SearchIndex(await builtDocsRecords());
  });

  const pagesOf = (query: string) =>
    index.search({ ...PARAMS, query }).hits.map((hit) => decodeURI(new URL(hit.url as string).pathname));

  it.each(FIRST)('ranks %s on %s first (%s)', (query, page) => {
    expect(pagesOf(query)[0]).toBe(page);
  });

  it('ranks the inpainting pages first for inpaint', () => {
    const pages = pagesOf('inpaint');
    expect(new Set(pages.slice(0, 2))).toEqual(
      new Set([
        '/Specialized Models/Inpainting/inpainting sdxl',
        '/Specialized Models/Inpainting/inpainting-sd1.5',
      ]),
    );
  });

  it('ranks a page title above its sections and its sections above their text', () => {
    const hits = index.search({ ...PARAMS, query: 'relight' }).hits;
    const types = hits.map((hit) => hit.type as string);
    expect(types[0]).toBe('lvl1');
    const firstContent = types.indexOf('content');
    if (firstContent >= 0) expect(types.slice(firstContent).every((t) => t === 'content')).toBe(true);
  });

  it('prefers the words close together: ControlNets SDXL before pages that merely mention both', () => {
    const pages = pagesOf('controlnet sdxl');
    expect(pages.indexOf('/Controlnets/ControlNets-SDXL')).toBeLessThan(
      pages.indexOf('/Controlnets/ControlNets-SD1.5') === -1
        ? 99
        : pages.indexOf('/Controlnets/ControlNets-SD1.5'),
    );
  });

  it('falls back to any word when no record has them all', () => {
    const strict = index.search({ ...PARAMS, query: 'relight zzzqqq' });
    expect(strict.nbHits).toBeGreaterThan(0);
    expect(decodeURI(new URL(strict.hits[0]!.url as string).pathname)).toBe('/Specialized Models/Relight');
  });

  it('finds nothing for words the docs do not hold', () => {
    expect(index.search({ ...PARAMS, query: 'zzzqqq' }).nbHits).toBe(0);
  });

  it('does not allow a typo in words shorter than four letters', () => {
    expect(index.search({ ...PARAMS, query: 'sdxk' }).nbHits).toBeGreaterThan(0);
    expect(index.search({ ...PARAMS, query: 'xdl zzz' }).nbHits).toBe(0);
  });
});
