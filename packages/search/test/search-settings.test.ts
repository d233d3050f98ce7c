import { describe, expect, it } from 'vitest';
import { searchSettingsFromEnv } from '../src/search-settings.ts';

describe('search settings', () => {
  it('default to the credentials, index and host the README documents', () => {
    const documented = { appId: 'imagegen', apiKey: 'search-only-key', indexName: 'docs', hosts: ['self'] };
    expect(searchSettingsFromEnv({})).toEqual(documented);
    expect(
      searchSettingsFromEnv({ SEARCH_APP_ID: '', SEARCH_API_KEY: '', SEARCH_INDEX: '', SEARCH_HOSTS: ' , ' }),
    ).toEqual(documented);
  });

  it('come from SEARCH_APP_ID, SEARCH_API_KEY, SEARCH_INDEX and the comma-separated SEARCH_HOSTS', () => {
    expect(
      searchSettingsFromEnv({
        SEARCH_APP_ID: 'app',
        SEARCH_API_KEY: 'key',
        SEARCH_INDEX: 'handbook',
        SEARCH_HOSTS: 'https://search-1.example.com, search-2.example.com:8443,self',
      }),
    ).toEqual({
      appId: 'app',
      apiKey: 'key',
      indexName: 'handbook',
      hosts: ['https://search-1.example.com', 'search-2.example.com:8443', 'self'],
    });
  });

  it('hand out a fresh hosts list each time', () => {
    searchSettingsFromEnv({}).hosts.push('changed');
    expect(searchSettingsFromEnv({}).hosts).toEqual(['self']);
  });
});
