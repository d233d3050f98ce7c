/** A fetch that records `METHOD /path` of every request, and can answer some itself. */
export function recordingFetch(answer?: (method: string, url: URL) => Response | undefined): {
  fetch: typeof globalThis.fetch;
  seen: string[];
} {
  const seen: string[] = [];
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const method = init?.method ?? 'GET';
    seen.push(`${method} ${url.pathname}`);
    return answer?.(method, url) ?? globalThis.fetch(input, init);
  };
  return { fetch, seen };
}
