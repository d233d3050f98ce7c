import { createHash, randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KEY_PATTERN = /^ig_[0-9A-Za-z]{32}$/;

/** A new API key: `ig_` and 32 base62 characters (about 190 bits). */
export function generateApiKey(): string {
  let body = '';
  // Rejection sampling keeps every character equally likely (256 is not a multiple of 62).
  while (body.length < 32) {
    for (const byte of randomBytes(48)) {
      if (byte < 248 && body.length < 32) body += BASE62[byte % 62];
    }
  }
  return `ig_${body}`;
}

export function isWellFormedApiKey(key: string): boolean {
  return KEY_PATTERN.test(key);
}

/** Keys are stored as their sha256 only; a leaked table reveals no usable key. */
export function hashApiKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

/** What listings show of a key: enough to tell keys apart, never enough to use one. */
export function keyPrefix(key: string): string {
  return key.slice(0, 7);
}
