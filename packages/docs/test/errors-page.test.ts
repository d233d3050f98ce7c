import { readFileSync } from 'node:fs';
import { compileRequestValidator, endpointByPath } from '@imagegen/contract';
import { parsedBody } from '@imagegen/contract/testing';
import { describe, expect, it } from 'vitest';

/**
 * The Errors page's tables of converted and refused values are claims about the API: each row,
 * sent in the example body of the endpoint the page names, must read or be refused as it says.
 */
const page = readFileSync(new URL('../docs/Introduction/errors.mdx', import.meta.url), 'utf8');
const PATH = '/sd/image2image/v1';

/** The rows of the table under a heading: the cells of each row, code marks removed. */
function tableUnder(heading: string): string[][] {
  const section = page.split(`## ${heading}\n`)[1]!.split('\n## ')[0]!;
  return section
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('| Type ') && !line.startsWith('|---'))
    .map((line) =>
      line
        .slice(2, -2)
        .split(' | ')
        .map((cell) => cell.replace(/^`(.*)`$/, '$1')),
    );
}

/** The endpoint's example with `field` set to `sent`, validated as the API validates a body. */
function send(field: string, sent: string) {
  const endpoint = endpointByPath(PATH)!;
  const example = Object.entries(endpoint.example ?? {}).filter(([name]) => name !== field);
  const raw = `{${[...example.map(([name, value]) => `${JSON.stringify(name)}: ${JSON.stringify(value)}`), `${JSON.stringify(field)}: ${sent}`].join(', ')}}`;
  // A number written with a fraction or an exponent is a float to Python's json module.
  const literals =
    /^-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?$/.test(sent) && /[.eE]/.test(sent)
      ? [{ path: [field], text: sent, float: true }]
      : [];
  return compileRequestValidator(endpoint)(
    parsedBody({ path: PATH, raw, literals, status: 200, response: {} }),
  );
}

describe('the Errors page', () => {
  const converted = tableUnder('Values the API converts');
  const refused = tableUnder('Values the API refuses');

  it('has both tables, with examples for every type', () => {
    for (const rows of [converted, refused]) {
      const types = new Set(rows.map(([type]) => type!.split(/[ ,]/)[0]));
      for (const type of ['integer', 'float', 'string', 'boolean', 'URL']) expect(types).toContain(type);
    }
  });

  it.each(converted)('%s %s: %s reads as %s', (_type, field, sent, read) => {
    const result = send(field!, sent!);
    expect(result.ok, JSON.stringify(!result.ok && result.detail)).toBe(true);
    if (!result.ok) return;
    if (read === 'left out') expect(result.value).not.toHaveProperty(field!);
    else expect(result.value[field!]).toEqual(JSON.parse(read!));
  });

  it.each(refused)('%s %s: %s is refused with %s', (_type, field, sent, type) => {
    const result = send(field!, sent!);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.detail).toEqual([expect.objectContaining({ loc: ['body', field], type })]);
  });
});
