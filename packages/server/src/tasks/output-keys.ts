import { randomBytes } from 'node:crypto';

/**
 * Blob keys of a task's outputs: `<22 random base64url chars>/<file_prefix><n>.<ext>`. The random
 * part comes first and is shared by the task's outputs, so a key cannot be guessed from another
 * task's, and the name a user sees keeps their prefix.
 */
export function allocateOutputKeys(count: number, filePrefix: unknown, extension = 'png'): string[] {
  const folder = randomBytes(16).toString('base64url');
  const prefix = safeFilePrefix(filePrefix);
  return Array.from({ length: count }, (_, n) => `${folder}/${prefix}${n}.${extension}`);
}

/** file_prefix as a file-name fragment: path separators and odd characters cannot reach a key. */
export function safeFilePrefix(filePrefix: unknown): string {
  if (typeof filePrefix !== 'string') return '';
  return filePrefix
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^[.]+/, '')
    .slice(0, 64);
}

export function downloadUrl(publicUrl: string, key: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/files/${key}`;
}

export function extensionFor(contentType: string): string {
  if (contentType === 'image/jpeg') return 'jpg';
  if (contentType === 'image/webp') return 'webp';
  return 'png';
}
