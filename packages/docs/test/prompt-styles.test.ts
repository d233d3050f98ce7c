import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { endpointByPath } from '@imagegen/contract';
import { PROMPT_STYLES } from '@imagegen/engine-comfyui/engine';
import { describe, expect, it } from 'vitest';
import { DOCS_DIR } from './support/doc-pages.ts';

/**
 * The style tables of the Flux and SD1.5 pages are written by hand: each must list exactly the
 * styles the engine applies, with the words it adds, so the docs promise what a task gets.
 */

const page = (name: string) => readFile(path.join(DOCS_DIR, 'Optimised-base-models', name), 'utf8');

/** The rows of a page's table whose first cell is a `style`: name → the other cells. */
function styleRows(text: string): Record<string, string[]> {
  const rows: Record<string, string[]> = {};
  for (const [, name = '', rest = ''] of text.matchAll(/^\| `([a-z_-]+)` \|(.*)\|$/gm)) {
    if (name in PROMPT_STYLES) rows[name] = rest.split('|').map((cell) => cell.trim());
  }
  return rows;
}

/** The presets `/generate/v1` accepts, as its schema lists them. */
function generateV1Presets(): string[] {
  const request = endpointByPath('/generate/v1')?.request as {
    properties: { style: { anyOf: { enum?: string[] }[] } };
  };
  return request.properties.style.anyOf.flatMap((choice) => choice.enum ?? []);
}

describe('the style tables of the docs', () => {
  it('list every style /generate/v3 applies, with the words it adds to the prompt', async () => {
    const rows = styleRows(await page('Flux-Schnell.mdx'));
    expect(Object.keys(rows).sort()).toEqual(Object.keys(PROMPT_STYLES).sort());
    for (const [name, style] of Object.entries(PROMPT_STYLES))
      expect(rows[name], name).toEqual([style.positive]);
  });

  it("list /generate/v1's presets, with the words each adds to the prompt and the negative prompt", async () => {
    const rows = styleRows(await page('Stable-Diffusion-1.mdx'));
    expect(Object.keys(rows).sort()).toEqual(generateV1Presets().sort());
    expect(generateV1Presets()).toEqual(['realistic_portrait', 'fantasy_art', 'cartoon_anime']);
    for (const name of generateV1Presets()) {
      const style = PROMPT_STYLES[name]!;
      expect(rows[name], name).toEqual([style.positive, style.negative]);
    }
  });
});
