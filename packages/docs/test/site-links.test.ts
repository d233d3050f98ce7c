import { describe, expect, it } from 'vitest';
import { LINK_ENV_NAMES, siteLinks } from '../site-links.ts';

describe('siteLinks', () => {
  it('points the site at the local API and its own /schema page by default', () => {
    const links = siteLinks({});
    expect(links.apiUrl).toBe('http://localhost:8000');
    expect(links.apiSchema).toBe('/schema');
    // The API has no sign-up page: the getting-started page tells how to get a key.
    expect(links.signUp).toBe('/Introduction/getting-started');
    expect(Object.keys(links).sort()).toEqual([
      'apiSchema',
      'apiUrl',
      'bookCall',
      'canvasApp',
      'enterprisePlan',
      'pricing',
      'privacy',
      'signUp',
      'supportPortal',
      'terms',
    ]);
  });

  it('takes every link from its environment variable, without a trailing slash', () => {
    const env = Object.fromEntries(
      Object.entries(LINK_ENV_NAMES).map(([key, name]) => [
        name,
        `https://${key.toLowerCase()}.example.org/`,
      ]),
    );
    const links = siteLinks(env);
    for (const [key, value] of Object.entries(links)) {
      expect(value).toBe(`https://${key.toLowerCase()}.example.org`);
    }
  });

  it('ignores empty overrides', () => {
    expect(siteLinks({ IMAGEGEN_DOCS_API_URL: '  ' }).apiUrl).toBe('http://localhost:8000');
  });
});
