import path from 'node:path';
import { engineCatalog } from '@imagegen/engines';
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { EngineNoteBody } from '../src/components/EngineNoteBody.tsx';
import { type EngineCatalogData, engineNote } from '../src/components/engine-note.ts';
import { docPages, plainText, taskPathsIn } from './support/doc-pages.ts';
import { ENGINES, engineNamed, shippedCatalog } from './support/engine-catalog.ts';

const BLOG = path.resolve(import.meta.dirname, '../blog');
const catalog = await shippedCatalog();

/** The task paths a page documents with the Endpoint components (POST operations). */
function documentedTaskPaths(text: string): string[] {
  return taskPathsIn(text, [
    'EndpointSummary',
    'ParameterTable',
    'RequestExamples',
    'TaskLifecycle',
    'ErrorResponses',
  ]);
}

/** The paths of the page's `<EngineNote path="…" />` and `<EngineNote paths={[…]} />`. */
function notedPaths(text: string): string[] {
  const found: string[] = [];
  for (const [, attributes = ''] of text.matchAll(/<EngineNote\b([^>]*)\/>/g)) {
    const single = /\bpath="([^"]+)"/.exec(attributes)?.[1];
    if (single) found.push(single);
    const list = /\bpaths=\{\[([^\]]*)\]\}/.exec(attributes)?.[1];
    if (list) found.push(...[...list.matchAll(/'([^']+)'/g)].map((m) => m[1] as string));
  }
  return found.sort();
}

function rendered(data: EngineCatalogData, paths: readonly string[]): string {
  return renderToStaticMarkup(createElement(EngineNoteBody, { catalog: data, paths }));
}

describe('the engine note', () => {
  it('is on every page that documents a task endpoint, once for each such endpoint', async () => {
    const docs = await docPages();
    const withEndpoints = docs.filter((page) => documentedTaskPaths(page.text).length > 0);
    expect(withEndpoints.length).toBeGreaterThan(30);
    for (const page of withEndpoints) {
      expect(notedPaths(page.text), page.name).toEqual(documentedTaskPaths(page.text));
      expect(page.text, page.name).toContain("import EngineNote from '@site/src/components/EngineNote';");
    }
    for (const page of docs.filter((p) => documentedTaskPaths(p.text).length === 0)) {
      expect(notedPaths(page.text), page.name).toEqual([]);
    }
  });

  it('renders, for each page endpoint, the engine the catalogue gives it', async () => {
    for (const page of await docPages()) {
      for (const notePath of notedPaths(page.text)) {
        const html = rendered(catalog, [notePath]);
        const answer = catalog.paths[notePath];
        expect(answer, notePath).toBeDefined();
        expect(html, notePath).toContain(`data-engine-path="${notePath}"`);
        expect(html, notePath).toContain(`data-engine="${answer?.engine ?? 'none'}"`);
        expect(html, notePath).toContain(`data-engine-kind="${answer?.kind}"`);
        const text = plainText(html);
        if (answer?.kind === 'real') {
          expect(text, notePath).toContain(`${notePath} is served for real by the ${answer.engine} engine`);
          expect(text, notePath).toContain(plainText(answer.runs?.replaceAll('`', '') ?? ''));
        } else if (answer?.kind === 'placeholder') {
          // Where a server engine (comfyui) serves the path once enabled, the sandbox answers only by default.
          const servedOnServers = Object.values(catalog.serverEngines).some((e) => e.pipelines[notePath]);
          expect(text, notePath).toContain(
            servedOnServers
              ? `By default ${notePath} is answered by the ${answer.engine} engine`
              : `answered by the ${answer.engine} engine on every deployment`,
          );
          expect(text, notePath).toContain('Request and response shapes are final');
        } else if (answer?.kind === 'registration') {
          expect(text, notePath).toContain('records the model and marks it ready');
        } else {
          expect(text, notePath).toContain(`no engine serves ${notePath}`);
        }
      }
    }
  });

  it('says the cpu engine serves its pipelines for real and the sandbox draws labelled placeholders', () => {
    expect(engineNote(catalog, '/bgremover/v1')).toMatchObject({ engine: 'cpu', kind: 'real' });
    expect(engineNote(catalog, '/bgremover/v1').text).toContain('ISNet');
    expect(engineNote(catalog, '/sdxl/text2image/v1')).toMatchObject({
      engine: 'sandbox',
      kind: 'placeholder',
    });
    expect(engineNote(catalog, '/sdxl/text2image/v1').text).toContain('visibly labelled placeholder images');
    expect(engineNote(catalog, '/train_model/v1').text).toContain('registers a model tagged `sandbox`');
    expect(engineNote(catalog, '/load_model/v1')).toMatchObject({ engine: null, kind: 'registration' });
  });

  it('says the task fails with no engine serves <path> where the catalogue has no engine for it', () => {
    const withoutSandbox = engineCatalog(
      ENGINES.filter((e) => e.name !== 'sandbox'),
      ['cpu'],
    );
    const note = engineNote(withoutSandbox, '/sd/text2image/v1');
    expect(note).toMatchObject({ engine: null, kind: 'none' });
    expect(plainText(rendered(withoutSandbox, ['/sd/text2image/v1']))).toContain(
      'its tasks fail with no engine serves /sd/text2image/v1.',
    );
  });

  it('tests against the catalogue the program prints for the docs build, from the engines it ships', () => {
    expect(JSON.parse(JSON.stringify(engineCatalog(ENGINES, ['cpu', 'sandbox'])))).toEqual(catalog);
  });

  it('prints the answer the catalogue resolved, never deciding again', () => {
    const [cpu, sandbox] = [engineNamed('cpu'), engineNamed('sandbox')];
    const sandboxFirst = engineCatalog(
      [cpu!, { ...sandbox!, pipelines: ['/bgremover/v1'] }],
      ['sandbox', 'cpu'],
    );
    expect(engineNote(sandboxFirst, '/bgremover/v1')).toMatchObject({
      engine: 'sandbox',
      kind: 'placeholder',
    });
    expect(engineNote(catalog, '/bgremover/v1').engine).toBe('cpu');
  });

  it('says, for each pipeline the comfyui engine serves, what its servers need, as its compiler declares it', () => {
    const comfyui = engineNamed('comfyui');
    const needs = comfyui?.servers?.needs ?? {};
    expect(Object.keys(needs).sort()).toEqual([...(comfyui?.pipelines ?? [])].sort());
    expect(Object.keys(needs)).toContain('/sd/text2image/v1');
    for (const [pipeline, need] of Object.entries(needs)) {
      const text = plainText(rendered(catalog, [pipeline]));
      expect(text, pipeline).toContain(
        `Where IMAGEGEN_ENGINES enables the comfyui engine ahead of ${catalog.paths[pipeline]?.engine}`,
      );
      expect(text, pipeline).toContain('with its servers in COMFYUI_URLS');
      for (const node of need.nodes) expect(text, pipeline).toContain(node);
      for (const pack of need.packs ?? [])
        expect(text, pipeline).toContain(
          `${pack.name} (${pack.repository})${pack.when ? ` ${plainText(pack.when.replaceAll('`', ''))}` : ''}`,
        );
      for (const model of need.models) {
        expect(text, pipeline).toContain(`in ${model.folder}, ${plainText(model.what.replaceAll('`', ''))}`);
      }
      for (const refusal of need.refuses ?? []) {
        expect(text, pipeline).toContain(`${refusal.field} (${plainText(refusal.why.replaceAll('`', ''))})`);
      }
      if (need.refuses?.length) expect(text, pipeline).toContain('The comfyui engine refuses ');
      else expect(text, pipeline).not.toContain('engine refuses');
      for (const ignored of need.ignores ?? []) {
        expect(text, pipeline).toContain(`${ignored.field} (${plainText(ignored.why.replaceAll('`', ''))})`);
      }
      if (need.ignores?.length)
        expect(text, pipeline).toContain('In some cases the comfyui engine takes no notice of ');
      else expect(text, pipeline).not.toContain('takes no notice of');
    }
    // The pack pipelines name what they refuse.
    // Its SDXL-Lightning and Turbo models' bounds too.
    expect(needs['/facelock/v2']?.refuses?.map((r) => r.field)).toEqual([
      'supp_image1',
      'model_id',
      'num_inference_steps',
      'guidance_scale',
    ]);
    // Flux Schnell's guidance, and strength and mask_image without a picture, run and are noted.
    expect(needs['/generate/v3']?.ignores?.map((r) => r.field)).toEqual([
      'guidance_scale',
      'strength',
      'mask_image',
    ]);
    expect(needs['/generate/v3']?.refuses?.map((r) => r.field)).toEqual(['style', 'num_inference_steps']);
    for (const path of Object.keys(catalog.paths).filter((p) => !needs[p])) {
      expect(engineNote(catalog, path).text, path).not.toContain('COMFYUI_URLS');
    }
  });

  it('says a pipeline the comfyui engine answers runs on its servers, not on the CPU', () => {
    const comfyuiFirst = engineCatalog(ENGINES, ['comfyui', 'cpu', 'sandbox']);
    const note = engineNote(comfyuiFirst, '/sd3/v1');
    expect(note).toMatchObject({ engine: 'comfyui', kind: 'real' });
    expect(note.text).toContain(
      'served for real by the `comfyui` engine on the servers `COMFYUI_URLS` names',
    );
    expect(note.text).toContain('`TripleCLIPLoader`');
    expect(note.text).not.toContain('It runs on the CPU');
    expect(engineNote(comfyuiFirst, '/bgremover/v1').text).toContain('It runs on the CPU');
  });

  it('refuses a path that is not a task endpoint', () => {
    expect(() => engineNote(catalog, '/models/v1')).toThrow('/models/v1 is not a task endpoint');
  });
});

describe('the docs pages', () => {
  it('mention COMFYUI_URLS only on the page that explains it: the engine notes print the rest', async () => {
    const mentioning = [...(await docPages()), ...(await docPages(BLOG))]
      .filter((page) => page.text.includes('COMFYUI_URLS'))
      .map((page) => page.name);
    expect(mentioning).toEqual([path.join('Deployment', 'Run-diffusion-on-ComfyUI.mdx')]);
  });
});
