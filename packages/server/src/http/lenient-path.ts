/**
 * A request path is read as FastAPI reads it: percent-escapes that are not UTF-8 (`%ff`, the
 * surrogate `%ED%A0%80`) decode to U+FFFD per invalid byte, and a `%` that starts no escape is
 * itself, as Python's `unquote` does. Fastify's router would refuse such a path with a 400 that
 * carries no `detail`. A path that decodes is left exactly as it is.
 */
export function lenientPath(url: string): string {
  // Without a `%` nothing is escaped: the path decodes as it is (every request but a few).
  if (!url.includes('%')) return url;
  const end = url.search(/[?#]/);
  const path = end === -1 ? url : url.slice(0, end);
  try {
    decodeURIComponent(path);
    return url;
  } catch {
    const utf8 = new TextDecoder();
    const fixed = path
      .replace(/%(?![0-9a-fA-F]{2})/g, '%25')
      .replace(/(?:%[0-9a-fA-F]{2})+/g, (run) =>
        encodeURIComponent(utf8.decode(Buffer.from(run.replaceAll('%', ''), 'hex'))),
      );
    return fixed + (end === -1 ? '' : url.slice(end));
  }
}
