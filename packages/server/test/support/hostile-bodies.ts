/**
 * Request bodies built to cost the server as much as a body of their size can: each shape is a
 * function of a byte budget, so a benchmark can grow it (10 KB, 100 KB, 1 MiB) and read how the
 * server's time grows, and a test can send the largest one while it watches `/health/live`.
 *
 * Every shape is a request any key holder may send. Each answers what the original service
 * answers (mostly a 422 with a long `detail`); what is measured is what that answer costs.
 */

export interface HostileShape {
  readonly name: string;
  /** What the shape stresses, in a few words. */
  readonly stresses: string;
  readonly method: 'POST' | 'GET';
  /** The path to send it to; a GET shape puts its payload in the query string. */
  readonly path: string;
  readonly contentType?: string;
  /** The body (or, for GET, the path with its query) of about `bytes` bytes. */
  build(bytes: number): string;
  /** The status the server answers (the test checks it, so a shape cannot quietly turn harmless). */
  readonly status: number;
}

/** `[item,item,...]` repeated until the text is about `bytes` long. */
function repeatList(item: string, bytes: number): string {
  const count = Math.max(1, Math.floor(bytes / (item.length + 1)));
  return `[${new Array(count).fill(item).join(',')}]`;
}

function jsonWith(fields: Record<string, unknown>, rawField: string, rawValue: string): string {
  const head = JSON.stringify(fields);
  return `${head.slice(0, -1)},${JSON.stringify(rawField)}:${rawValue}}`;
}

const SD = '/sd/text2image/v1';
const PROMPTS = { prompt: 'x', negative_prompt: 'y' };

export const HOSTILE_SHAPES: readonly HostileShape[] = [
  {
    name: 'invalid-list-items',
    stresses: 'one 422 entry per list item (float out of range)',
    method: 'POST',
    path: SD,
    build: (bytes) => jsonWith(PROMPTS, 'lora_weights', repeatList('1e400', bytes)),
    status: 422,
  },
  {
    name: 'wrong-type-list-items',
    stresses: 'one 422 entry per list item (object where a string goes)',
    method: 'POST',
    path: SD,
    build: (bytes) => jsonWith(PROMPTS, 'embeddings', repeatList('{}', bytes)),
    status: 422,
  },
  {
    name: 'too-long-list',
    stresses: 'a list over its maxItems whose items all fail too (the length error hides them)',
    method: 'POST',
    path: '/generate/v3',
    build: (bytes) => jsonWith({ prompt: 'x' }, 'palette', repeatList('"not-a-colour"', bytes)),
    status: 422,
  },
  {
    name: 'invalid-urls',
    stresses: 'the URL check on every item of an image list',
    method: 'POST',
    path: SD,
    build: (bytes) => jsonWith(PROMPTS, 'ip_adapter_style_images', repeatList('"http://"', bytes)),
    status: 422,
  },
  {
    name: 'long-url',
    stresses: 'one URL as long as the body',
    method: 'POST',
    path: '/sd/image2image/v1',
    build: (bytes) =>
      JSON.stringify({
        ...PROMPTS,
        init_image: `https://a.example/${'a/.%'.repeat(Math.floor(bytes / 4) - 20)}`,
      }),
    status: 422,
  },
  {
    name: 'unknown-fields',
    stresses: 'many fields the model ignores',
    method: 'POST',
    path: SD,
    build: (bytes) => {
      const count = Math.max(1, Math.floor(bytes / 18));
      const fields = Array.from({ length: count }, (_, i) => `"f${i}":0`).join(',');
      return `{"prompt":"x","negative_prompt":"y","samples":9,${fields}}`;
    },
    status: 422,
  },
  {
    name: 'duplicate-keys',
    stresses: 'the same key repeated (the last one wins)',
    method: 'POST',
    path: SD,
    build: (bytes) => `{${repeatList('"prompt":"x"', bytes).slice(1, -1)},"negative_prompt":[]}`,
    status: 422,
  },
  {
    name: 'escaped-prompt',
    stresses: 'a prompt of \\u escapes and surrogate pairs',
    method: 'POST',
    path: SD,
    build: (bytes) =>
      `{"prompt":"${'\\ud83d\\ude00\\u00e9'.repeat(Math.floor(bytes / 18) - 4)}","negative_prompt":"y","samples":9}`,
    status: 422,
  },
  {
    name: 'deep-nesting',
    stresses: 'lists nested as deep as the reader allows, many times over',
    method: 'POST',
    path: SD,
    build: (bytes) => {
      const one = `${'['.repeat(900)}${']'.repeat(900)}`;
      return jsonWith(PROMPTS, 'embeddings', repeatList(one, bytes));
    },
    status: 422,
  },
  {
    name: 'broken-json-at-end',
    stresses: 'a decode error at the last byte of a long document of many lines',
    method: 'POST',
    path: SD,
    build: (bytes) =>
      `{"prompt":"x","negative_prompt":"y","embeddings":[${'"a",\n'.repeat(Math.floor(bytes / 5) - 12)}`,
    status: 422,
  },
  {
    name: 'many-enum-errors',
    stresses: 'one enumeration error (its message lists every member) per list item',
    method: 'POST',
    path: SD,
    build: (bytes) => jsonWith(PROMPTS, 'controlnets', repeatList('"x"', bytes)),
    status: 422,
  },
  {
    name: 'form-fields',
    stresses: 'a urlencoded body of many fields',
    method: 'POST',
    path: SD,
    contentType: 'application/x-www-form-urlencoded',
    build: (bytes) => new Array(Math.max(1, Math.floor(bytes / 4))).fill('a=b').join('&'),
    status: 422,
  },
  {
    name: 'long-query',
    stresses: 'a listing query string of many repeated parameters',
    method: 'GET',
    path: '/tasks/v1',
    build: (bytes) =>
      `/tasks/v1?${new Array(Math.max(1, Math.floor(bytes / 10))).fill('limit=abc').join('&')}`,
    status: 422,
  },
];
