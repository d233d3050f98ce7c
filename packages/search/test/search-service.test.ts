import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordsOfPage } from '../src/indexer.ts';
import {
  builtDocsRecords,
  CREDENTIALS,
  docSearchRequest,
  type RunningService,
  startService,
} from './support/built-docs.ts';

interface Hit {
  objectID: string;
  url: string;
  type: string;
  hierarchy: Record<string, string | null>;
  content?: string | null;
  _highlightResult: Record<string, unknown>;
  _snippetResult?: Record<string, unknown>;
}
interface Result {
  hits: Hit[];
  nbHits: number;
  page: number;
  nbPages: number;
  hitsPerPage: number;
  queryID?: string;
  index: string;
  query: string;
}

describe('search service contract (POST /1/indexes/*/queries)', () => {
  let service: RunningService;
  beforeAll(async () => {
    service = await startService({ records: await builtDocsRecords() });
  });
  afterAll(() => service.close());

  const results = async (body: unknown, path = '/1/indexes/*/queries'): Promise<Result[]> => {
    const response = await service.post(path, body);
    expect(response.status).toBe(200);
    return ((await response.json()) as { results: Result[] }).results;
  };

  it('answers the DocSearch modal request with hits, highlights, snippets, nbHits and a queryID', async () => {
    const [result] = await results(docSearchRequest('schedulers'));
    expect(result!.nbHits).toBeGreaterThan(0);
    expect(result!.index).toBe('docs');
    expect(result!.query).toBe('schedulers');
    expect(result!.queryID).toMatch(/^[0-9a-f]{32}$/);
    const hit = result!.hits[0]!;
    expect(Object.keys(hit).sort()).toEqual(
      ['_highlightResult', '_snippetResult', 'content', 'hierarchy', 'objectID', 'type', 'url'].sort(),
    );
    expect(new URL(hit.url).pathname).toBe('/Parameters/Schedulers');
    expect(hit.type).toBe('lvl1');
    const lvl1 = (hit._highlightResult.hierarchy as Record<string, { value: string; matchLevel: string }>)
      .lvl1!;
    expect(lvl1).toMatchObject({
      value: '<mark>Schedulers</mark>',
      matchLevel: 'full',
      matchedWords: ['schedulers'],
    });
    expect((hit._snippetResult!.hierarchy as Record<string, { value: string }>).lvl1!.value).toBe(
      '<mark>Schedulers</mark>',
    );
  });

  it('gives every hit an absolute url with its heading anchor and the DocSearch hierarchy', async () => {
    const [result] = await results(docSearchRequest('guidance_scale'));
    for (const hit of result!.hits) {
      expect(() => new URL(hit.url)).not.toThrow();
      expect(hit.hierarchy).toHaveProperty('lvl0');
      expect(Object.keys(hit.hierarchy).sort()).toEqual([
        'lvl0',
        'lvl1',
        'lvl2',
        'lvl3',
        'lvl4',
        'lvl5',
        'lvl6',
      ]);
      expect(['lvl1', 'lvl2', 'lvl3', 'lvl4', 'lvl5', 'lvl6', 'content']).toContain(hit.type);
    }
    expect(result!.hits.some((hit) => new URL(hit.url).hash === '#parameters')).toBe(true);
  });

  it('cuts content snippets to the requested number of words around the match', async () => {
    const [ten] = await results(docSearchRequest('identity encoder'));
    const [five] = await results(
      docSearchRequest('identity encoder', { attributesToSnippet: ['content:5'], hitsPerPage: 1 }),
    );
    const words = (html: string) =>
      html
        .replace(/<\/?mark>|…/g, '')
        .split(/\s+/)
        .filter(Boolean).length;
    const tenSnippet = (
      ten!.hits.find((h) => h.type === 'content')!._snippetResult!.content as { value: string }
    ).value;
    expect(words(tenSnippet)).toBeLessThanOrEqual(10);
    expect(tenSnippet).toContain('<mark>');
    const fiveSnippet = (five!.hits[0]!._snippetResult!.content as { value: string }).value;
    expect(words(fiveSnippet)).toBeLessThanOrEqual(5);
    expect(fiveSnippet).toMatch(/…$/);
  });

  it('gives no queryID unless clickAnalytics asks for one', async () => {
    const [result] = await results(docSearchRequest('upscale', { clickAnalytics: false }));
    expect(result!.queryID).toBeUndefined();
  });

  it('reads URL-encoded params as InstantSearch and algoliasearch 4 send them', async () => {
    const params = new URLSearchParams({
      query: 'outpainting',
      hitsPerPage: '3',
      facetFilters: JSON.stringify(['language:en']),
      highlightPreTag: '<b>',
      highlightPostTag: '</b>',
    }).toString();
    const [result] = await results({ requests: [{ indexName: 'docs', params }] });
    expect(result!.hits).toHaveLength(3);
    expect(JSON.stringify(result!.hits[0]!._highlightResult)).toContain('<b>Outpainting</b>');
  });

  it('answers a single query on /1/indexes/{index}/query', async () => {
    const response = await service.post('/1/indexes/docs/query', { query: 'relight', hitsPerPage: 2 });
    expect(response.status).toBe(200);
    const result = (await response.json()) as Result;
    expect(result.hits).toHaveLength(2);
    expect(new URL(result.hits[0]!.url).pathname).toBe('/Specialized%20Models/Relight');
  });

  it('pages through distinct results: no url twice, page 1 continues page 0', async () => {
    const [first] = await results(docSearchRequest('image', { hitsPerPage: 10, page: 0 }));
    const [second] = await results(docSearchRequest('image', { hitsPerPage: 10, page: 1 }));
    const urls = [...first!.hits, ...second!.hits].map((h) => h.url);
    expect(new Set(urls).size).toBe(20);
    expect(first!.nbHits).toBe(second!.nbHits);
    expect(first!.nbPages).toBe(Math.ceil(first!.nbHits / 10));
    expect(second!.page).toBe(1);
  });

  it('filters by facets: AND of ORs, so the docs tag alone leaves the guides out', async () => {
    const [docsOnly] = await results(
      docSearchRequest('products', {
        facetFilters: ['language:en', ['docusaurus_tag:docs-default-current']],
      }),
    );
    const [everything] = await results(docSearchRequest('products'));
    const [nothing] = await results(docSearchRequest('products', { facetFilters: ['language:fr'] }));
    expect(nothing!.nbHits).toBe(0);
    expect(docsOnly!.hits.every((h) => !h.url.includes('/guide/'))).toBe(true);
    expect(everything!.hits.some((h) => h.url.includes('/guide/'))).toBe(true);
  });

  it('answers an empty query with hits in the custom ranking order (page headings first)', async () => {
    const [result] = await results(docSearchRequest('', { hitsPerPage: 5 }));
    expect(result!.nbHits).toBeGreaterThan(100);
    expect(result!.hits.every((h) => h.type === 'lvl1')).toBe(true);
  });

  it('answers several queries in one request, in order', async () => {
    const body = docSearchRequest('relight');
    body.requests.push({ ...body.requests[0]!, query: 'photomaker' });
    const [a, b] = await results(body);
    expect(a!.query).toBe('relight');
    expect(b!.query).toBe('photomaker');
    expect(b!.hits[0]!.url).toContain('Photomaker');
  });

  it('escapes HTML in highlighted text so that only the highlight tags are markup', async () => {
    const page = recordsOfPage(
      '<html><body><article><header><h1>Bounds</h1></header><p>steps must be &lt; 41 &amp; &gt; 0 <script>x</script></p></article></body></html>',
      'Bounds/index.html',
      'http://localhost:3000',
    );
    const local = await startService({ records: page.records });
    try {
      const response = await local.post('/1/indexes/*/queries', {
        requests: [
          { indexName: 'docs', query: 'steps', highlightPreTag: '<mark>', highlightPostTag: '</mark>' },
        ],
      });
      const [result] = ((await response.json()) as { results: Result[] }).results;
      const content = result!.hits.find((h) => h.type === 'content')!;
      expect((content._highlightResult.content as { value: string }).value).toBe(
        '<mark>steps</mark> must be &lt; 41 &amp; &gt; 0',
      );
    } finally {
      await local.close();
    }
  });

  describe('refusals, Algolia-shaped', () => {
    const refusal = async (response: Response, status: number, message: RegExp) => {
      expect(response.status).toBe(status);
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
      const body = (await response.json()) as { message: string; status: number };
      expect(body.status).toBe(status);
      expect(body.message).toMatch(message);
    };

    it('refuses a request without credentials or with a key other than the search-only key', async () => {
      await refusal(
        await service.post('/1/indexes/*/queries', docSearchRequest('x'), { auth: false }),
        403,
        /Missing/,
      );
      await refusal(
        await service.post(
          `/1/indexes/*/queries?x-algolia-application-id=${CREDENTIALS.appId}&x-algolia-api-key=admin-key`,
          docSearchRequest('x'),
        ),
        403,
        /Invalid Application-ID or API key/,
      );
    });

    it('accepts the credentials in headers too, as server-side clients send them', async () => {
      const response = await service.post('/1/indexes/*/queries', docSearchRequest('relight'), {
        auth: false,
        headers: { 'x-algolia-application-id': CREDENTIALS.appId, 'x-algolia-api-key': CREDENTIALS.apiKey },
      });
      expect(response.status).toBe(200);
    });

    it('refuses a query longer than 64 characters', async () => {
      await refusal(
        await service.post('/1/indexes/*/queries', docSearchRequest('a'.repeat(65))),
        400,
        /at most 64/,
      );
      const ok = await service.post('/1/indexes/*/queries', docSearchRequest('a'.repeat(64)));
      expect(ok.status).toBe(200);
    });

    it('refuses hitsPerPage above 100 or below 0, and a page that is not an integer', async () => {
      await refusal(
        await service.post('/1/indexes/*/queries', docSearchRequest('x', { hitsPerPage: 101 })),
        400,
        /hitsPerPage/,
      );
      await refusal(
        await service.post('/1/indexes/*/queries', docSearchRequest('x', { hitsPerPage: -1 })),
        400,
        /hitsPerPage/,
      );
      await refusal(
        await service.post('/1/indexes/*/queries', docSearchRequest('x', { page: 1.5 })),
        400,
        /page/,
      );
    });

    it('refuses a body over 64 KiB', async () => {
      const body = docSearchRequest('x', { analyticsTags: ['y'.repeat(70 * 1024)] });
      await refusal(await service.post('/1/indexes/*/queries', body), 413, /too large/);
    });

    it('refuses a body that is not JSON, has no requests, or has requests of the wrong shape', async () => {
      await refusal(await service.post('/1/indexes/*/queries', '{"requests": ['), 400, /not valid JSON/);
      await refusal(await service.post('/1/indexes/*/queries', { query: 'x' }), 400, /requests array/);
      await refusal(await service.post('/1/indexes/*/queries', { requests: [] }), 400, /1 to 50/);
      await refusal(
        await service.post('/1/indexes/*/queries', { requests: ['x'] }),
        400,
        /must be an object/,
      );
      await refusal(
        await service.post('/1/indexes/*/queries', { requests: [{ query: 'x' }] }),
        400,
        /indexName/,
      );
      await refusal(
        await service.post('/1/indexes/*/queries', docSearchRequest('x', { query: 42 })),
        400,
        /query must be a string/,
      );
      await refusal(
        await service.post('/1/indexes/*/queries', docSearchRequest('x', { facetFilters: [42] })),
        400,
        /facetFilters/,
      );
    });

    it('answers 404 for an index it does not serve', async () => {
      await refusal(
        await service.post('/1/indexes/*/queries', docSearchRequest('x', { indexName: 'other' })),
        404,
        /Index other does not exist/,
      );
    });

    it('answers any string as a query or an index name without a 5xx', async () => {
      for (const query of ['a\u0000b', '\ud800', 'x\udfff', '\ufdd0', '😀']) {
        const [result] = await results(docSearchRequest(query));
        expect(result!.query).toBe(query);
      }
      for (const name of ['%ff', '%00', '%ED%A0%80', 'a%']) {
        const response = await service.post(`/1/indexes/${name}/query`, { query: 'relight' });
        expect(response.status, name).toBe(404);
        expect(((await response.json()) as { message: string }).message).toMatch(/does not exist/);
      }
    });

    it('answers 405 to a GET on the queries path', async () => {
      const response = await fetch(`${service.url}/1/indexes/*/queries`);
      expect(response.status).toBe(405);
    });
  });

  it('answers the CORS preflight so that any origin may query', async () => {
    const response = await fetch(`${service.url}/1/indexes/*/queries`, {
      method: 'OPTIONS',
      headers: {
        origin: 'http://docs.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, x-algolia-api-key',
      },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('access-control-allow-methods')).toContain('POST');
    expect(response.headers.get('access-control-allow-headers')).toContain('x-algolia-api-key');
  });

  it('leaves other paths to the host', async () => {
    const response = await fetch(`${service.url}/Introduction/getting-started`);
    expect(await response.text()).toBe('not ours');
  });
});
