import { randomBytes } from 'node:crypto';

/**
 * Blob keys: `<22 random base64url characters>/<file name>`. The random folder is the credential
 * (the `/files/` route needs no API key), shared by the files of one task or one upload, so a key
 * cannot be guessed from another's while the name a user sees keeps their `file_prefix`.
 */
export function newBlobKeys(fileNames: readonly string[]): string[] {
  const folder = randomBytes(16).toString('base64url');
  return fileNames.map((name) => `${folder}/${name}`);
}

/** Keys of a task's outputs: `<folder>/<file_prefix><n>.<ext>`. */
export function allocateOutputKeys(count: number, filePrefix: unknown, extension = 'png'): string[] {
  const prefix = safeFilePrefix(filePrefix);
  return newBlobKeys(Array.from({ length: count }, (_, n) => `${prefix}${n}.${extension}`));
}

/** file_prefix as a file-name fragment: path separators and odd characters cannot reach a key. */
function safeFilePrefix(filePrefix: unknown): string {
  if (typeof filePrefix !== 'string') return '';
  return filePrefix
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^[.]+/, '')
    .slice(0, 64);
}

const EXTENSIONS: Readonly<Record<string, string>> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/webp': 'webp',
  'image/gif': 'gif',
};

/** The file extension of a stored image's content type (png for anything unknown). */
export function extensionFor(contentType: string): string {
  return EXTENSIONS[contentType] ?? 'png';
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  ...Object.fromEntries(Object.entries(EXTENSIONS).map(([type, extension]) => [extension, type])),
  jpeg: 'image/jpeg',
};

/** The content type a key's file extension names, or undefined for an extension of no image type. */
export function contentTypeOfKey(key: string): string | undefined {
  const dot = key.lastIndexOf('.');
  return dot > key.lastIndexOf('/') ? CONTENT_TYPES[key.slice(dot + 1).toLowerCase()] : undefined;
}

/**
 * Keys are relative paths of plain segments (`<random>/<file_prefix><n>.png`): no `..`, no
 * absolute paths, no backslashes, nothing a store could turn into a path outside itself.
 */
export function isValidBlobKey(key: string): boolean {
  if (key.length === 0 || key.length > 512) return false;
  return key.split('/').every((segment) => /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,254}$/.test(segment));
}

/** Where the API serves stored blobs: `GET <public url>/files/<key>`. */
export const FILES_PATH = '/files/';

export function downloadUrl(publicUrl: string, key: string): string {
  return `${publicUrl.replace(/\/+$/, '')}${FILES_PATH}${key}`;
}

/**
 * A blob key inside a link to `/files/<folder>/<name>` on any host, as a regular expression whose
 * first group is the key: the same text in JavaScript and in PostgreSQL's regexp functions.
 */
export const FILES_LINK_PATTERN = '/files/([A-Za-z0-9_-]+/[A-Za-z0-9._-]+)';

/**
 * The blob keys a task's input links to: each string in it that is one of the API's own links
 * (the key the worker will read; only a key a file can have), and every `/files/<key>` inside any string (a link to this API
 * through another name reaches the same files). One pass over the input, linear in its size.
 */
export function fileKeysLinkedFrom(input: unknown, publicUrl: string): string[] {
  const keys = new Set<string>();
  const link = new RegExp(FILES_LINK_PATTERN, 'g');
  const pending: unknown[] = [input];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value === 'string') {
      if (!value.includes(FILES_PATH)) continue;
      const own = blobKeyOfUrl(value, publicUrl);
      if (own !== undefined && isValidBlobKey(own)) keys.add(own);
      for (const match of value.matchAll(link)) keys.add(match[1]!);
    } else if (value !== null && typeof value === 'object') {
      for (const item of Object.values(value)) pending.push(item);
    }
  }
  return [...keys];
}

/** The blob key behind one of the API's own links, or undefined for any other URL. */
export function blobKeyOfUrl(url: string, publicUrl: string): string | undefined {
  let parsed: URL;
  let base: URL;
  try {
    parsed = new URL(url);
    base = new URL(publicUrl);
  } catch {
    return undefined;
  }
  const prefix = `${base.pathname.replace(/\/+$/, '')}${FILES_PATH}`;
  // The query and fragment are ignored, as the /files route ignores them.
  if (parsed.origin !== base.origin || !parsed.pathname.startsWith(prefix)) return undefined;
  try {
    return decodeURIComponent(parsed.pathname.slice(prefix.length));
  } catch {
    return undefined;
  }
}
