import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromStored, toStored, toStoredJson } from '../src/stored-text.ts';
import { createTestDatabase, type TestDatabase } from './support/test-database.ts';

/** Strings PostgreSQL cannot hold as they are, and their neighbours that it can. */
const AWKWARD = [
  'a\u0000b',
  '\u0000a\u0000',
  '\ud800x',
  'x\udfff',
  '\udc00\ud800',
  '\uffff',
  '😀 astral',
  '\ud83d',
  '\ufdd0',
  '\ufdd00',
  '\ufdd0ud800',
  '\ufdd0\ufdd0\u0000',
  '%00 \\u0000 literally',
  '',
  'plain text',
];

describe('the stored form of strings', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    await db.pool.query('CREATE TABLE samples (t text, j jsonb)');
  });
  afterAll(() => db.drop());

  it('leaves strings without U+0000, lone surrogates or U+FDD0 as they are', () => {
    for (const text of ['plain text', '', '😀 astral', '\uffff', 'é%\\u0000'])
      expect(toStored(text)).toBe(text);
  });

  it('stores nothing PostgreSQL refuses: no U+0000, no lone surrogate', () => {
    for (const text of AWKWARD) {
      const stored = toStored(text);
      expect(stored).not.toContain('\u0000');
      // UTF-8 has no lone surrogates: one would come back from the round trip as U+FFFD.
      expect(Buffer.from(stored, 'utf8').toString('utf8')).toBe(stored);
    }
  });

  it('reads back every string exactly, and tells different strings apart', () => {
    const stored = AWKWARD.map((text) => toStored(text));
    expect(stored.map((text) => fromStored(text))).toEqual(AWKWARD);
    expect(new Set(stored).size).toBe(AWKWARD.length);
  });

  it('decodes a concatenation of stored strings as the concatenation of the strings', () => {
    for (const a of AWKWARD) {
      for (const b of AWKWARD) expect(fromStored(toStored(a) + toStored(b))).toBe(a + b);
    }
  });

  it('walks arrays and plain objects, keys included, and leaves other values alone', () => {
    const when = new Date(0);
    const value = {
      'k\u0000': ['a\u0000', 1, null, true, { deep: '\ud800' }],
      when,
      ['__proto__']: 'x\u0000',
    };
    const stored = toStored(value);
    expect(JSON.stringify(stored)).not.toMatch(/\\u0000|\\ud800/);
    expect(stored.when).toBe(when);
    expect(fromStored(stored)).toEqual(value);
    expect(Object.keys(fromStored(stored))).toEqual(Object.keys(value));
  });

  it('goes through text and jsonb columns and comes back unchanged', async () => {
    for (const text of AWKWARD) {
      await db.pool.query('INSERT INTO samples (t, j) VALUES ($1, $2)', [
        toStored(text),
        JSON.stringify(toStored({ text, list: [text] })),
      ]);
    }
    const { rows } = await db.pool.query<{ t: string; j: { text: string; list: string[] } }>(
      'SELECT t, j FROM samples',
    );
    expect(fromStored(rows)).toEqual(AWKWARD.map((text) => ({ t: text, j: { text, list: [text] } })));
    // An equality lookup finds a stored key by the stored form of the same string.
    const found = await db.pool.query('SELECT count(*)::int AS n FROM samples WHERE t = $1', [
      toStored('a\u0000b'),
    ]);
    expect(found.rows[0].n).toBe(1);
  });

  it('hands back a value with nothing to encode as it is, and copies one with something', () => {
    const plain = { prompt: 'a \ud83d\ude00 fox', sizes: [1, Number.NaN, null], nested: { k: ['x'] } };
    expect(toStored(plain)).toBe(plain);
    expect(fromStored(plain)).toBe(plain);
    const awkward = { prompt: 'ok', list: ['fine', 'a\u0000b'] };
    const stored = toStored(awkward);
    expect(stored).not.toBe(awkward);
    expect(stored.list[0]).toBe('fine');
    expect(awkward.list[1]).toBe('a\u0000b');
    expect(fromStored(stored)).toEqual(awkward);
  });

  it('writes the JSON text of the stored form, in the keys and values of any nesting', () => {
    const values: unknown[] = [
      { prompt: 'a \ud83d\ude00 fox', sizes: [1, Number.NaN, null], nested: { k: ['x'] } },
      ...AWKWARD.map((text) => ({ text, list: [text], nested: { [text]: { deeper: [text] } } })),
      [{ 'key\u0000': 1 }, { '\ud800': 'x' }, { '\ufdd0': true }],
      [{ at: new Date(0), bytes: Buffer.from('\u0000') }],
    ];
    for (const value of values) expect(toStoredJson(value)).toBe(JSON.stringify(toStored(value)));
  });

  it('is what the column would refuse without it', async () => {
    await expect(db.pool.query('SELECT $1::text', ['a\u0000b'])).rejects.toThrow();
    await expect(db.pool.query('SELECT $1::jsonb', [JSON.stringify('a\u0000b')])).rejects.toThrow();
    await expect(db.pool.query('SELECT $1::jsonb', [JSON.stringify('\ud800')])).rejects.toThrow();
  });
});
