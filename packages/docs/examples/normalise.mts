/**
 * What changes from one recording run to the next, written as placeholders, so that the same
 * behaviour of the product records the same file.
 */

/** What the API hands out as its address in the recordings (as the contract's response examples do). */
const PUBLIC_API = 'https://api.example.com';

/** Answer bodies' fields that hold a duration measured by this run. */
const TIMING_FIELDS = new Set(['eta_seconds', 'training_duration_seconds']);

/**
 * Writes what changes from run to run as placeholders: the API's address as the public one of
 * the docs, the stand-in's links as the public links of the example, the values in `known`, the
 * random folder of a stored file's key, and measured durations.
 */
export function normaliser(
  apiUrl: string,
  webUrl: string,
  known: ReadonlyMap<string, string>,
): (value: unknown) => unknown {
  const text = (value: string): string => {
    // The stand-in serves `https://host/path` at `<webUrl>/host/path`.
    let out = value.replaceAll(apiUrl, PUBLIC_API).replaceAll(`${webUrl}/`, 'https://');
    for (const [real, placeholder] of known) out = out.replaceAll(real, placeholder);
    return out.replace(/\/files\/[A-Za-z0-9_-]{22}\//g, '/files/<key>/');
  };
  const walk = (value: unknown, key?: string): unknown => {
    if (key && TIMING_FIELDS.has(key) && typeof value === 'number') return '<seconds>';
    if (typeof value === 'string') return text(value);
    if (Array.isArray(value)) return value.map((item) => walk(item));
    if (value && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, k)]));
    }
    return value;
  };
  return (value) => walk(value);
}
