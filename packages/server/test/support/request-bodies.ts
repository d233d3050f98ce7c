/**
 * Request bodies generated from the contract's own schemas (the endpoint table's TypeBox schemas,
 * which are JSON Schema): where each schema takes a string (`stringSlots`), valid values for any
 * schema, and a seeded stream of fuzzed requests for every POST path (`fuzzRequests`): valid
 * bodies, bodies with fields swapped for hostile values, broken JSON, values that are not
 * objects, odd content types. The same seed gives the same requests, so a failure reproduces.
 */
import { type Endpoint, endpoints } from '@imagegen/contract';
import { highest, lowest, type Schema } from './openapi-requests.ts';

export type { Schema };

/** A seeded generator (mulberry32): small, fast, and the same sequence for the same seed. */
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  /** In [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
}

/** A JSON literal written as it is, for what JSON.stringify cannot write (NaN, 1e400, 5.0). */
export class Literal {
  constructor(readonly text: string) {}
}

/** JSON text of a value that may hold Literals. */
export function jsonText(value: unknown): string {
  if (value instanceof Literal) return value.text;
  if (Array.isArray(value)) return `[${value.map(jsonText).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.entries(value)
      .map(([key, item]) => `${JSON.stringify(key)}:${jsonText(item)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

// ---- schemas ----------------------------------------------------------------------------------

/** The alternatives a schema allows (anyOf flattened), `null` included. */
export function branches(schema: Schema): Schema[] {
  const anyOf = schema.anyOf as Schema[] | undefined;
  return anyOf ? anyOf.flatMap(branches) : [schema];
}

export function propertiesOf(schema: Schema): Record<string, Schema> {
  return (schema.properties as Record<string, Schema> | undefined) ?? {};
}

/** What a string schema admits: free text, an http(s) URL, a member of an enumeration, a pattern. */
export type StringKind = 'text' | 'url' | 'enum' | 'pattern';

function stringKind(schema: Schema): StringKind {
  if (Array.isArray(schema.enum)) return 'enum';
  if (schema['x-http-url'] === true) return 'url';
  if (typeof schema.pattern === 'string') return 'pattern';
  return 'text';
}

/** A place in a body that takes a string: a field, or (index 0) the items of a list field. */
export interface StringSlot {
  readonly field: string;
  readonly item: boolean;
  readonly kind: StringKind;
}

/** Every place of a request schema that takes a string, found by walking the schema. */
export function stringSlots(schema: Schema): StringSlot[] {
  const slots: StringSlot[] = [];
  const seen = new Set<string>();
  const add = (field: string, item: boolean, kind: StringKind) => {
    const key = `${field}/${item}/${kind}`;
    if (!seen.has(key)) slots.push({ field, item, kind });
    seen.add(key);
  };
  for (const [field, property] of Object.entries(propertiesOf(schema))) {
    for (const branch of branches(property)) {
      if (branch.type === 'string') add(field, false, stringKind(branch));
      if (branch.type === 'array') {
        for (const item of branches(branch.items as Schema)) {
          if (item.type === 'string') add(field, true, stringKind(item));
        }
      }
    }
  }
  return slots;
}

/** `body` with `value` in `slot` (a list slot becomes a list of that one value). */
export function withSlot(body: Record<string, unknown>, slot: StringSlot, value: string) {
  return { ...body, [slot.field]: slot.item ? [value] : value };
}

/** Bounds of a numeric schema as an inclusive range (exclusive bounds stepped inside). */
function range(schema: Schema): [number, number] {
  const step = schema.type === 'integer' ? 1 : 0.001;
  const low = lowest(schema, step) ?? -1000;
  return [low, Math.max(low, highest(schema, step) ?? low + 2000)];
}

const URLS = [
  'https://images.example.com/a.png',
  'http://93.184.216.34/b.jpg?size=2',
  'https://cdn.example.org/c',
];
const TEXTS = ['a cat', '', 'portrait, studio light, 4k', 'héllo ☃ 😀', 'x'.repeat(60)];

/** A value the schema accepts (for the if/then rules, see `validBody`). */
export function validValue(schema: Schema, rng: Rng): unknown {
  const options = branches(schema);
  const branch = rng.pick(options);
  if (branch.type === 'null') return null;
  if (Array.isArray(branch.enum)) return rng.pick(branch.enum);
  switch (branch.type) {
    case 'string': {
      const kind = stringKind(branch);
      if (kind === 'url') return rng.pick(URLS);
      if (kind === 'pattern') return String(branch.pattern).includes('#') ? '#a1b2c3' : 'deadbeef01';
      return rng.pick(TEXTS);
    }
    case 'integer':
    case 'number': {
      const [low, high] = range(branch);
      const value = low + rng.next() * (high - low);
      return branch.type === 'integer' ? Math.round(value) : Math.round(value * 1000) / 1000;
    }
    case 'boolean':
      return rng.chance(0.5);
    case 'array': {
      const min = Number(branch.minItems ?? 0);
      const max = Math.min(Number(branch.maxItems ?? 3), min + 3);
      return Array.from({ length: rng.int(Math.max(min, max > 0 ? 1 : 0), max) }, () =>
        validValue(branch.items as Schema, rng),
      );
    }
    default:
      throw new Error(`no value for ${JSON.stringify(branch)}`);
  }
}

/** A body the schema accepts: its required fields and some optional ones, the if/then rules met. */
export function validBody(schema: Schema, rng: Rng): Record<string, unknown> {
  const required = new Set((schema.required as string[] | undefined) ?? []);
  const properties = propertiesOf(schema);
  const body: Record<string, unknown> = {};
  for (const [field, property] of Object.entries(properties)) {
    if (required.has(field) || rng.chance(0.3)) body[field] = validValue(property, rng);
  }
  for (const rule of (schema.allOf as Schema[] | undefined) ?? []) {
    const condition = propertiesOf(rule.if as Schema);
    const holds = Object.entries(condition).every(([field, want]) => {
      const value = body[field];
      return Array.isArray(want.enum) ? want.enum.includes(value) : typeof value === want.type;
    });
    if (!holds) continue;
    for (const field of ((rule.then as Schema).required as string[] | undefined) ?? []) {
      body[field] ??= validValue(properties[field]!, rng);
    }
  }
  return body;
}

// ---- fuzzing ----------------------------------------------------------------------------------

export interface FuzzRequest {
  readonly path: string;
  /** null: no content-type header. */
  readonly contentType: string | null;
  readonly body: Buffer;
  /** How it was made, for failure messages. */
  readonly how: string;
}

const JSON_TYPE = 'application/json';

/** Values of every JSON type and then some, for any field. */
function hostileValue(rng: Rng, depth = 0): unknown {
  switch (rng.int(0, 17)) {
    case 0:
      return rng.pick([null, true, false]);
    case 1:
      return rng.pick([0, -1, 1, 2 ** 31, -(2 ** 31), 2 ** 53 + 1, Number.MAX_SAFE_INTEGER, -0]);
    case 2:
      return new Literal(rng.pick(['NaN', 'Infinity', '-Infinity', '1e400', '-1e400', '1e-400', '5e-324']));
    case 3:
      return new Literal(
        rng.pick(['9'.repeat(rng.int(17, 400)), '-9'.repeat(1) + '9'.repeat(30), '1.0', '2.50', '1E2']),
      );
    case 4:
      return rng.next() * 10 ** rng.int(-10, 300) * (rng.chance(0.5) ? 1 : -1);
    case 5:
      return rng.pick([
        '',
        ' ',
        '1',
        '512',
        ' 2 ',
        '2.5',
        '1e3',
        'nan',
        'inf',
        '-inf',
        'true',
        'no',
        'off',
        'y',
      ]);
    case 6:
      return rng.pick(['a\u0000b', '\ud800', '\udfffx', '\uffff', '\ufdd0', '😀', '\u0000', 'é\u202e']);
    case 7:
      return 'x'.repeat(rng.chance(0.01) ? 200_000 : rng.pick([300, 2000, 5000]));
    case 8:
      return randomText(rng, rng.int(0, 40));
    case 9:
      return rng.pick(URLS) + rng.pick(['', '\u0000', '%00', '/../..', '#frag', '?q=\ud800']);
    case 10:
      return rng.pick([
        'http://localhost/x',
        'ftp://a.com/x',
        'http://',
        'https://a.com:99999/',
        'javascript:1',
      ]);
    case 11:
      return `https://images.example.com/${'a'.repeat(rng.pick([2020, 2030, 2070, 2090]))}`;
    case 12:
      return depth > 3 ? [] : Array.from({ length: rng.int(0, 4) }, () => hostileValue(rng, depth + 1));
    case 13:
      return depth > 3 ? {} : { [randomText(rng, 4)]: hostileValue(rng, depth + 1) };
    case 14:
      return nested(rng.int(10, 400));
    case 15:
      return Array.from({ length: rng.pick([50, 1000]) }, () => rng.int(0, 9));
    case 16:
      return rng.pick(['deadbeef', 'DEADBEEF', '#abc', '#abcd', 'sd1.5', 'openpose', 'lora', 'private']);
    default:
      return rng.pick([[], {}, [null], [''], ['a', 1], [[1, 2]]]);
  }
}

function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? [value] : { k: value };
  return value;
}

function randomText(rng: Rng, length: number): string {
  let text = '';
  for (let i = 0; i < length; i++) {
    const range = rng.pick([
      [0x20, 0x7e],
      [0x00, 0x1f],
      [0x80, 0x2ff],
      [0xd800, 0xdfff],
      [0xe000, 0xffff],
    ] as const);
    text += String.fromCharCode(rng.int(range[0], range[1]));
  }
  return text;
}

/** Changes to the JSON text of a body: truncation, duplicate keys, stray bytes, wrappers. */
function brokenText(text: string, rng: Rng): [string, Buffer] {
  const bytes = Buffer.from(text);
  const at = rng.int(0, bytes.length);
  switch (rng.int(0, 11)) {
    case 0:
      return ['truncated', bytes.subarray(0, at)];
    case 1:
      return [
        'duplicate keys',
        Buffer.from(text.length > 2 ? `${text.slice(0, -1)},${text.slice(1)}` : text),
      ];
    case 2:
      return ['a byte flipped', flip(bytes, at, rng)];
    case 3:
      return [
        'stray bytes',
        Buffer.concat([bytes.subarray(0, at), randomBytes(rng, rng.int(1, 8)), bytes.subarray(at)]),
      ];
    case 4:
      return ['byte-order mark', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes])];
    case 5:
      return [
        'invalid UTF-8',
        Buffer.concat([
          bytes.subarray(0, at),
          Buffer.from([rng.pick([0xff, 0xc0, 0xed, 0x80])]),
          bytes.subarray(at),
        ]),
      ];
    case 6:
      return ['whitespace around', Buffer.from(` \n\t${text}\r\n `)];
    case 7:
      return ['trailing data', Buffer.from(`${text}${rng.pick([' x', '{}', ',', ']', '\u0000'])}`)];
    case 8:
      return ['single quotes', Buffer.from(text.replace(/"/g, "'"))];
    case 9:
      return ['random bytes', randomBytes(rng, rng.int(0, 200))];
    case 10:
      return ['only whitespace', Buffer.from(rng.pick(['', ' ', '\n\n', '\t \r\n']))];
    default: {
      const depth = rng.chance(0.1) ? 50_000 : rng.pick([100, 1500, 5000]);
      const [open, close] = rng.pick([
        ['[', ']'],
        ['{"a":', '}'],
      ]);
      const closed = rng.chance(0.5) ? depth : rng.int(0, 5);
      return ['deep nesting', Buffer.from(`${open.repeat(depth)}1${close.repeat(closed)}`)];
    }
  }
}

function flip(bytes: Buffer, at: number, rng: Rng): Buffer {
  const copy = Buffer.from(bytes);
  if (copy.length > 0) copy[Math.min(at, copy.length - 1)] = rng.int(0, 255);
  return copy;
}

function randomBytes(rng: Rng, length: number): Buffer {
  return Buffer.from(Array.from({ length }, () => rng.int(0, 255)));
}

/** Values that are not objects, where an object is expected. */
function notAnObject(body: Record<string, unknown>, rng: Rng): unknown {
  return rng.pick<unknown>([
    [],
    Object.entries(body),
    [...Object.entries(body), ['extra']],
    [[1, 2]],
    ['ab', 'cd'],
    [body],
    'text',
    5,
    null,
    true,
    new Literal('NaN'),
  ]);
}

const CONTENT_TYPES = [
  null,
  'text/plain',
  'text/plain; charset=utf-8',
  'application/vnd.api+json',
  'application/json; charset=latin-1',
  'APPLICATION/JSON',
  'application/x-www-form-urlencoded',
  'multipart/form-data',
  'multipart/form-data; boundary=zz',
  'application/xml',
  'a/b/c',
  ';;',
  'application/json, text/plain',
];

/** A 1×1 PNG: an upload part that is a real image. */
const TINY_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

/** A multipart body with random parts (some of them real images), for the upload path and any other. */
function multipartBody(rng: Rng): [string, Buffer] {
  const boundary = `fuzz${rng.int(0, 1e6)}`;
  const parts: Buffer[] = [];
  for (let n = rng.int(0, 3); n > 0; n--) {
    const name = rng.pick(['image_files', 'image_files', 'other', '']);
    const file = rng.chance(0.7);
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="${name}"${file ? `; filename="f${n}.png"` : ''}\r\n${file ? `Content-Type: ${rng.pick(['image/png', 'image/jpeg', 'text/plain', 'application/octet-stream'])}\r\n` : ''}\r\n`;
    const data = file && rng.chance(0.4) ? TINY_PNG : randomBytes(rng, rng.int(0, 300));
    parts.push(Buffer.from(head), data, Buffer.from('\r\n'));
  }
  if (rng.chance(0.8)) parts.push(Buffer.from(`--${boundary}--\r\n`));
  const type = rng.chance(0.9) ? `multipart/form-data; boundary=${boundary}` : 'multipart/form-data';
  return [type, Buffer.concat(parts)];
}

/** The POST paths of the contract and the schema of each one's JSON body (none for uploads). */
export function postPaths(): { path: string; schema: Schema | undefined }[] {
  return endpoints
    .filter((endpoint: Endpoint) => endpoint.method === 'POST')
    .map((endpoint) => ({ path: endpoint.path, schema: endpoint.request as Schema | undefined }));
}

/**
 * `count` fuzzed requests, the POST paths in turn. Most bodies are near-valid (a valid body with
 * one to three fields swapped for hostile values), so validation and storage are reached, not
 * only the JSON parser.
 */
export function* fuzzRequests(seed: number, count: number): Generator<FuzzRequest> {
  const rng = new Rng(seed);
  const paths = postPaths();
  for (let n = 0; n < count; n++) {
    const { path, schema } = paths[n % paths.length]!;
    const body = schema ? validBody(schema, rng) : { image_files: ['x'] };
    const fields = Object.keys(schema ? propertiesOf(schema) : body);
    const roll = rng.next();
    if (!schema && roll < 0.3) {
      const [type, bytes] = multipartBody(rng);
      yield { path, contentType: type, body: bytes, how: 'multipart' };
    } else if (roll < 0.15) {
      yield { path, contentType: JSON_TYPE, body: Buffer.from(jsonText(body)), how: 'valid' };
    } else if (roll < 0.6) {
      const changed = rng.int(1, 3);
      for (let i = 0; i < changed; i++) body[rng.pick(fields)] = hostileValue(rng);
      if (rng.chance(0.1)) delete body[rng.pick(fields)];
      if (rng.chance(0.1)) body[randomText(rng, 6)] = hostileValue(rng);
      yield {
        path,
        contentType: JSON_TYPE,
        body: Buffer.from(jsonText(body)),
        how: `${changed} fields swapped`,
      };
    } else if (roll < 0.78) {
      const [how, bytes] = brokenText(jsonText(body), rng);
      yield { path, contentType: JSON_TYPE, body: bytes, how };
    } else if (roll < 0.88) {
      const value = notAnObject(body, rng);
      yield { path, contentType: JSON_TYPE, body: Buffer.from(jsonText(value)), how: 'not an object' };
    } else if (roll < 0.98) {
      const contentType = rng.pick(CONTENT_TYPES);
      yield { path, contentType, body: Buffer.from(jsonText(body)), how: `content-type ${contentType}` };
    } else {
      const [type, bytes] = multipartBody(rng);
      yield { path, contentType: rng.chance(0.5) ? type : JSON_TYPE, body: bytes, how: 'multipart bytes' };
    }
  }
}
