import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { COMPILERS } from '@imagegen/engine-comfyui/engine';
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { ServerNeedsBody } from '../src/components/ServerNeedsBody.tsx';
import { shippedCatalog } from './support/engine-catalog.ts';

const catalog = await shippedCatalog();
const render = (engine: string) => renderToStaticMarkup(createElement(ServerNeedsBody, { catalog, engine }));
const unmarked = (text: string) => text.replaceAll('`', '');

describe("the table of what the comfyui engine's servers need", () => {
  it("has one row per compiled pipeline, with the compiler's node classes and model files", () => {
    const html = render('comfyui');
    const rows = [...html.matchAll(/<tr data-pipeline="([^"]+)">(.*?)<\/tr>/g)];
    expect(rows.map(([, pipeline]) => pipeline)).toEqual(COMPILERS.map((compiler) => compiler.pipeline));
    for (const [n, [, , row]] of rows.entries()) {
      const { requires } = COMPILERS[n]!;
      const text = row!
        .replace(/<[^>]+>/g, '')
        .replaceAll('&quot;', '"')
        .replaceAll('&#x27;', "'");
      for (const node of requires.nodes) expect(text).toContain(node);
      for (const pack of requires.packs ?? []) {
        expect(row).toContain(`<a href="${pack.repository}"><code>${pack.name}</code></a>`);
        if (pack.when) expect(text).toContain(`${pack.name} (${unmarked(pack.when)})`);
      }
      for (const model of requires.models) expect(text).toContain(`${model.folder}: ${unmarked(model.what)}`);
      for (const refusal of requires.refuses ?? [])
        expect(text).toContain(`${refusal.field}: ${unmarked(refusal.why)}`);
      for (const ignored of requires.ignores ?? [])
        expect(text).toContain(`${ignored.field}: ${unmarked(ignored.why)}`);
    }
    expect(rows.some(([, , row]) => row!.includes('<code>guidance_scale</code>'))).toBe(true);
    // The style-aligned pack is named where its fields are.
    expect(html).toContain('<code>style_aligned_comfy</code>');
  });

  it('refuses an engine the catalogue has no servers for', () => {
    expect(() => render('cpu')).toThrow('the engine catalogue has no server engine "cpu"');
  });

  it('is what the Deployment page prints', async () => {
    const page = await readFile(
      path.resolve(import.meta.dirname, '../docs/Deployment/Run-diffusion-on-ComfyUI.mdx'),
      'utf8',
    );
    expect(page).toContain('<ServerNeeds engine="comfyui" />');
  });
});
