/**
 * The search client of the modal and the /search page: algoliasearch 5's lite client pointed at
 * our own search service, never at algolia.net. Hosts come from the page's run-time settings
 * (SEARCH_HOSTS where the docs host runs, else at build time); 'self' is the page's own origin,
 * where the docs host serves the service on the embedded default. The client's behaviour is
 * algoliasearch's retry strategy with these timeouts: connect 1 s (until the answer starts), read 2 s, write 30 s; on a
 * timeout, a network failure or a 5xx the next host is tried, and a failed host is skipped for
 * 120 s (with the hosts cache below).
 */
import { liteClient } from 'algoliasearch/lite';

export type LiteClient = ReturnType<typeof liteClient>;

export const SEARCH_TIMEOUTS = { connect: 1000, read: 2000, write: 30000 };

export interface SearchHost {
  url: string;
  accept: 'read' | 'readWrite' | 'write';
  protocol: 'http' | 'https';
  port?: number;
}

/** 'self', 'https://search.example.com:8443' or 'search.example.com' (https). */
export function parseHosts(configured: readonly string[] | undefined, origin: string): SearchHost[] {
  const entries = configured && configured.length > 0 ? configured : ['self'];
  return entries.map((entry) => {
    const raw = entry.trim() === 'self' ? origin : entry.trim();
    const url = new URL(/^https?:\/\//.test(raw) ? raw : `https://${raw}`);
    const protocol = url.protocol === 'http:' ? 'http' : 'https';
    return {
      url: url.hostname.includes(':') ? `[${url.hostname}]` : url.hostname,
      accept: 'read',
      protocol,
      ...(url.port ? { port: Number(url.port) } : {}),
    };
  });
}

function hostUrl(host: SearchHost): string {
  return `${host.protocol}://${host.url}${host.port ? `:${host.port}` : ''}`;
}

type ClientOptions = NonNullable<Parameters<typeof liteClient>[2]>;

/**
 * Remembers each host's state (up, down, timed out, and since when) by its address. The stock
 * caches key a host's state by the whole state object, so a failed host is never found again
 * and is retried at once instead of after 120 s (algoliasearch 5.64, createStatefulHost).
 */
export function createHostsCache(): NonNullable<ClientOptions['hostsCache']> {
  const states = new Map<string, unknown>();
  const key = (host: unknown) => {
    const { protocol, url, port } = host as SearchHost;
    return `${protocol}://${url}:${port ?? ''}`;
  };
  return {
    async get(host, defaultValue, events) {
      const known = states.get(key(host));
      if (known !== undefined) return known as never;
      const value = await defaultValue();
      await events?.miss?.(value);
      return value;
    },
    async set(host, value) {
      states.set(key(host), value);
      return value;
    },
    async delete(host) {
      states.delete(key(host));
    },
    async clear() {
      states.clear();
    },
  };
}

/** One memory of host states per page, shared by the modal and the /search page. */
const sharedHostsCache = createHostsCache();

export function createSearchClient(
  appId: string,
  apiKey: string,
  hosts: SearchHost[],
  hostsCache: NonNullable<ClientOptions['hostsCache']> = sharedHostsCache,
): LiteClient {
  return liteClient(appId, apiKey, { hosts, timeouts: SEARCH_TIMEOUTS, hostsCache });
}

export interface InsightsEvent {
  eventType: 'view' | 'click' | 'conversion';
  eventName: string;
  index: string;
  userToken: string;
  objectIDs: string[];
  queryID?: string;
  positions?: number[];
}

/**
 * Sends insights events to the first host that takes them (Algolia Insights API `POST /1/events`).
 * `keepalive` lets a click's event outlive the navigation it starts; text/plain needs no preflight.
 */
export async function sendInsights(
  hosts: SearchHost[],
  credentials: { appId: string; apiKey: string },
  events: InsightsEvent[],
): Promise<boolean> {
  const query = new URLSearchParams({
    'x-algolia-application-id': credentials.appId,
    'x-algolia-api-key': credentials.apiKey,
  });
  for (const host of hosts) {
    try {
      const response = await fetch(`${hostUrl(host)}/1/events?${query}`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: JSON.stringify({ events }),
        keepalive: true,
        signal: AbortSignal.timeout(SEARCH_TIMEOUTS.read),
      });
      if (response.status < 500) return response.ok;
    } catch {
      // The next host, as the search client does.
    }
  }
  return false;
}
