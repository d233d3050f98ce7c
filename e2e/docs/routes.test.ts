import { describe, expect, it } from 'vitest';
import { startDocsSite } from '../support/docs-site.ts';
import { siteAndBrowser } from '../support/site-and-browser.ts';

/** Every route of the site with the title its page carries, spelled exactly as the site's paths are. */
const ROUTES: [string, string][] = [
  ['/', 'Introduction'],
  ['/guide', 'Guides'],
  ['/guide/archive', 'Archive'],
  ['/guide/turn-ideas-into-products', 'Turn ideas into products'],
  ['/schema', 'API Schema'],
  ['/search', 'Search the documentation'],
  ...(
    [
      ['controlnets', 'Controlnets'],
      ['custom-checkpoint', 'Custom Checkpoint'],
      ['custom-embeddings', 'Custom Embeddings'],
      ['custom-lora', 'Custom LoRA'],
      ['deployment', 'Deployment'],
      ['enterprise', 'Enterprise'],
      ['face-control', 'Face Control'],
      ['fashion', 'Fashion'],
      ['finetuning--model-upload', 'Finetuning / Model Upload'],
      ['image-to-image', 'Image to Image'],
      ['inpainting', 'Inpainting'],
      ['introduction', 'Introduction'],
      ['ip-adapters', 'IP-Adapters'],
      ['optimised-base-models', 'Optimised base models'],
      ['parameters', 'Parameters'],
      ['pipelines', 'Pipelines'],
      ['specialized-models', 'Specialized Models'],
    ] as const
  ).map(([slug, title]): [string, string] => [`/category/${slug}`, title]),
  ['/Introduction/getting-started', 'Getting started'],
  ['/Introduction/errors', 'Errors'],
  ['/Introduction/task-lifecycle', 'Task lifecycle'],
  ['/Introduction/playground', 'Playground'],
  ['/playground', 'Playground'],
  ['/Optimised-base-models/Flux-Schnell', 'Flux Schnell'],
  ['/Optimised-base-models/Stable-Diffusion-1', 'Stable Diffusion 1.5'],
  ['/Optimised-base-models/Stable-Difusion-3.5', 'Stable Diffusion 3.5'],
  ['/Optimised-base-models/Stable-Difusion-XL', 'Stable Diffusion XL'],
  ['/Parameters/Hi-res Fix', 'Hi-res Fix'],
  ['/Parameters/Hidiffusion', 'HiDiffusion'],
  ['/Parameters/NSFW-check', 'NSFW check'],
  ['/Parameters/prompt-guide', 'Prompt guide'],
  ['/Parameters/Schedulers', 'Schedulers'],
  ['/Pipelines/Face Control/Face lock', 'Face lock'],
  ['/Pipelines/Face Control/Instamodel', 'Instant model'],
  ['/Pipelines/Face Control/IP-Adapters', 'IP-Adapters'],
  ['/Pipelines/Face Control/Photomaker', 'Photomaker'],
  ['/Pipelines/Face Control/Quick-swap', 'Quick swap'],
  ['/Pipelines/Fashion/Model-Switch', 'Model switch'],
  ['/Pipelines/Fashion/virtual-try-on-dress', 'Virtual try-on: dress'],
  ['/Pipelines/Fashion/virtual-try-on-lower-body', 'Virtual try-on: lower body'],
  ['/Pipelines/Fashion/virtual-try-on-upper-body', 'Virtual try-on: upper body'],
  ['/Pipelines/Outpainting', 'Outpainting'],
  ['/Pipelines/Upscale', 'Upscale'],
  ['/Pipelines/Logo', 'Logo'],
  ['/Pipelines/Inpaint-anything', 'Inpaint anything'],
  ['/Controlnets/ControlNets-SD1.5', 'ControlNets SD1.5'],
  ['/Controlnets/ControlNets-SDXL', 'ControlNets SDXL'],
  ['/Custom-upload/Get-all-models', 'Get all models'],
  ['/Custom-upload/Train-models', 'Train models'],
  ['/Custom-upload/Upload-models', 'Upload models'],
  ['/Deployment/Run-diffusion-on-ComfyUI', 'Run diffusion on ComfyUI'],
  ['/Deployment/Processes-and-storage', 'Processes and storage'],
  ['/Deployment/Monitoring', 'Monitoring: metrics and logs'],
  ['/Deployment/Process-layouts', 'Process layouts'],
  ['/Deployment/Upgrades', 'Upgrades and migrations'],
  ['/Enterprise/API Changes', 'API Changes'],
  ['/Enterprise/Getting Started', 'Getting Started'],
  ['/Enterprise/Sync and Upload Models', 'Sync and Upload Models'],
  ['/Specialized Models/Adapters/sd1.5', 'IP-Adapters SD1.5'],
  ['/Specialized Models/Adapters/sdxl', 'IP-Adapters SDXL'],
  ['/Specialized Models/Custom-Checkpoint/sd1.5', 'Custom checkpoint SD1.5'],
  ['/Specialized Models/Custom-Checkpoint/sdxl', 'Custom checkpoint SDXL'],
  ['/Specialized Models/Custom-Embeddings/sd1.5', 'Custom embeddings SD1.5'],
  ['/Specialized Models/Custom-Embeddings/sdxl', 'Custom embeddings SDXL'],
  ['/Specialized Models/Custom-LoRA/sd1.5', 'Custom LoRA SD1.5'],
  ['/Specialized Models/Custom-LoRA/sdxl', 'Custom LoRA SDXL'],
  ['/Specialized Models/Image to Image/img2img sd1.5', 'Image to image SD1.5'],
  ['/Specialized Models/Image to Image/img2img sdxl', 'Image to image SDXL'],
  ['/Specialized Models/Inpainting/inpainting sdxl', 'Inpainting SDXL'],
  ['/Specialized Models/Inpainting/inpainting-sd1.5', 'Inpainting SD1.5'],
  ['/Specialized Models/Lightning-models', 'Lightning models'],
  ['/Specialized Models/Relight', 'Relight'],
  ['/Specialized Models/Remove & Change Background', 'Remove & Change Background'],
  ['/Specialized Models/Superresolution', 'Superresolution'],
];

function titleOf(html: string): string | undefined {
  const raw = /<title[^>]*>([^<]*)<\/title>/.exec(html)?.[1];
  return raw
    ?.replace(/&amp;/g, '&')
    .replace(/&quot;/g, '"')
    .replace(/&#x27;|&#39;/g, "'");
}

const env = siteAndBrowser(startDocsSite);

describe('the routes of the site', () => {
  it('answer every listed route with its page and title', async () => {
    const wrong: string[] = [];
    for (const [route, title] of ROUTES) {
      const res = await fetch(env.site.docs.url + encodeURI(route));
      const found = titleOf(await res.text());
      if (res.status !== 200 || found !== `${title} | imagegen`)
        wrong.push(`${route}: ${res.status} ${found}`);
    }
    expect(wrong).toEqual([]);
  });

  it('shows the same titles once the client app has rendered each kind of page', async () => {
    const context = await env.site.newContext(env.browser);
    const page = await context.newPage();
    for (const [route, title] of [ROUTES[0]!, ROUTES[2]!, ROUTES[10]!, ROUTES.at(-2)!]) {
      await page.goto(env.site.docs.url + encodeURI(route));
      await page.waitForSelector('html[data-has-hydrated="true"]');
      expect(await page.title()).toBe(`${title} | imagegen`);
    }
    await context.close();
  });

  it('shows the not-found page, with HTTP 404 and its own title, for any other path', async () => {
    for (const path of [
      '/guide/tags',
      '/introduction/getting-started',
      '/Parameters/Hi-res%20fix',
      '/nope',
    ]) {
      expect((await fetch(env.site.docs.url + path)).status, path).toBe(404);
    }
    const context = await env.site.newContext(env.browser);
    const page = await context.newPage();
    const response = await page.goto(`${env.site.docs.url}/no/such/page`);
    expect(response?.status()).toBe(404);
    await expect(page.locator('h1').textContent()).resolves.toBe('Page Not Found');
    // The page says what it is in its title, as served and once the client app has rendered it.
    expect(titleOf(await (await fetch(`${env.site.docs.url}/nope`)).text())).toBe(
      'Page not found | imagegen',
    );
    await page.waitForSelector('html[data-has-hydrated="true"]');
    expect(await page.title()).toBe('Page not found | imagegen');
    await context.close();
  });

  it('strips a trailing index.html or .html from paths', async () => {
    const context = await env.site.newContext(env.browser);
    const page = await context.newPage();
    await page.goto(`${env.site.docs.url}/Pipelines/Upscale/index.html`);
    expect(new URL(page.url()).pathname).toBe('/Pipelines/Upscale');
    await page.goto(`${env.site.docs.url}/guide/archive.html`);
    expect(new URL(page.url()).pathname).toBe('/guide/archive');
    // The client-side route sets the page title once React has rendered it: a loaded machine can
    // read the title between the URL change and that render.
    await page
      .waitForFunction(() => document.title !== 'imagegen', undefined, { timeout: 30_000 })
      .catch(() => {});
    expect(await page.title()).toBe('Archive | imagegen');
    await context.close();
  });
});
