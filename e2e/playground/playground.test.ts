import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { sampleImageUrl } from '@imagegen/contract';
import { startDocsSite } from '@imagegen/docs/host';
import { createCpuEngine } from '@imagegen/engine-cpu/engine';
import { productScene } from '@imagegen/engine-cpu/test-images';
import { createSandboxEngine } from '@imagegen/engine-sandbox/engine';
import { createEngineRegistry, type Engine } from '@imagegen/engines';
import { createOwner } from '@imagegen/server';
import {
  apiCalls,
  createTestDatabase,
  type LoopbackApi,
  startLoopbackApi,
  type TestDatabase,
} from '@imagegen/server/testing';
import type { BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { seriousViolations } from '../support/axe.ts';
import { DESKTOP } from '../support/chromium.ts';
import { BUILD_DIR } from '../support/docs-site.ts';
import { siteAndBrowser } from '../support/site-and-browser.ts';

/**
 * The playground of the built docs site against the real API on another origin (its own port),
 * with the sandbox engine for generations and the cpu engine for background removal. The docs
 * host serves the API's address as the run's setting, as `npm start` does.
 */

const run = promisify(execFile);
/** A sandbox task whose prompt is this waits in the engine until it is cancelled. */
const SLOW = 'a slow lighthouse';

interface PlaygroundSite {
  api: LoopbackApi;
  docsUrl: string;
  key: string;
  close(): Promise<void>;
}

function abortableWait(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason);
    });
  });
}

async function startPlaygroundSite(): Promise<PlaygroundSite> {
  const db: TestDatabase = await createTestDatabase();
  const { apiKey } = await createOwner(db.pool, { name: 'playground', plan: 'UNLIMITED' });
  const sandbox = createSandboxEngine({ delayMs: 2000 });
  // A preview with each progress report, as the comfyui engine sends ComfyUI's sampler previews.
  const preview = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#c07030' } })
    .jpeg()
    .toBuffer();
  const slowSandbox: Engine = {
    ...sandbox,
    async run(job, ctx) {
      if (job.input.prompt === SLOW) await abortableWait(120_000, ctx.signal);
      return sandbox.run(job, {
        ...ctx,
        progress(fraction, message) {
          ctx.progress(fraction, message);
          ctx.preview?.({ data: preview, contentType: 'image/jpeg' });
        },
      });
    },
  };
  const cpu = createCpuEngine();
  const api = await startLoopbackApi({
    pool: db.pool,
    engines: createEngineRegistry([cpu, slowSandbox], { enabled: ['cpu', 'sandbox'], pinned: {} }),
    // One task at a time, so a slow task holds the queue behind it (the live view's queue position).
    worker: { pollMs: 100, concurrency: 1 },
  });
  const docs = await startDocsSite({
    port: 0,
    host: '127.0.0.1',
    buildDir: BUILD_DIR,
    apiUrl: api.url,
    search: { appId: 'playground', apiKey: 'playground', indexName: 'docs', hosts: ['self'] },
  });
  return {
    api,
    docsUrl: docs.url,
    key: apiKey,
    async close() {
      await docs.close();
      await api.close();
      await cpu.close?.();
      await db.drop();
    },
  };
}

const env = siteAndBrowser(startPlaygroundSite);
let context: BrowserContext | undefined;
afterEach(async () => {
  await context?.close();
  context = undefined;
});

interface Opened {
  page: Page;
  /** `METHOD url` of every request that carried an API-Key header. */
  keyed: string[];
}

async function open(
  pipeline: string,
  options: BrowserContextOptions & { key?: string } = {},
): Promise<Opened> {
  const { key = env.site.key, ...contextOptions } = options;
  context = await env.browser.newContext({
    ...DESKTOP,
    permissions: ['clipboard-read', 'clipboard-write'],
    ...contextOptions,
  });
  const keyed: string[] = [];
  context.on('request', (request) => {
    if (request.headers()['api-key'] !== undefined) keyed.push(`${request.method()} ${request.url()}`);
  });
  const page = await context.newPage();
  await page.goto(`${env.site.docsUrl}/playground?pipeline=${encodeURIComponent(pipeline)}`);
  await page.waitForSelector('html[data-has-hydrated="true"]');
  await page.locator('#playground-form').waitFor();
  if (key) {
    await page.getByLabel('API key').fill(key);
    // The page takes the key once typing has stopped: Run (and uploads) wait for it.
    await expect.poll(() => page.getByRole('button', { name: 'Run' }).isEnabled()).toBe(true);
  }
  return { page, keyed };
}

function field(page: Page, name: string, control = 'input, textarea, select') {
  return page.locator(`[data-field="${name}"]`).locator(control).first();
}

/**
 * Waits until an image field holds the URL of the file just uploaded to it, and answers it. The
 * example's sample image is a `/files/` URL of the API as well: a check for `/files/` alone passes
 * before a slow upload has landed, and Run then sends the sample.
 */
async function uploaded(page: Page, name: string): Promise<string> {
  const api = env.site.api.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const upload = new RegExp(`^${api}/files/(?!samples/)`);
  await expect.poll(() => field(page, name).inputValue(), { timeout: 30_000 }).toMatch(upload);
  return field(page, name).inputValue();
}

async function showOptional(page: Page) {
  const details = page.locator('details', { has: page.locator('summary', { hasText: 'Optional fields' }) });
  if ((await details.getAttribute('open')) === null) await details.locator('summary').click();
}

async function finalState(page: Page, timeout = 60_000): Promise<string> {
  const state = page.getByTestId('run-state');
  await expect.poll(async () => state.textContent(), { timeout }).toMatch(/^(Succeeded|Failed|Cancelled)$/);
  return (await state.textContent()) ?? '';
}

/** The API called directly with the caller's key, as a client does. */
const direct = apiCalls(() => env.site.api.url);
const TASK = { negative_prompt: '', width: 64, height: 64, samples: 1 };

/** The small text2image request of these tests, typed into the form. */
async function fillText2Image(page: Page, prompt: string) {
  await field(page, 'prompt').fill(prompt);
  await showOptional(page);
  await field(page, 'width').fill('64');
  await field(page, 'height').fill('64');
  await field(page, 'samples').fill('2');
}

describe('the playground', () => {
  it('asks for a key, then shows the API’s bound message as a field is typed, before any submission', async () => {
    const { page, keyed } = await open('/sd/text2image/v1', { key: '' });
    await expect.poll(() => page.getByTestId('key-missing').isVisible()).toBe(true);
    expect(await page.getByRole('button', { name: 'Run' }).isDisabled()).toBe(true);
    await page.getByLabel('API key').fill(env.site.key);
    await expect.poll(() => page.getByTestId('key-missing').count()).toBe(0);

    await showOptional(page);
    await field(page, 'samples').fill('9');
    const error = page.locator('[data-field="samples"] [id$="-error"]');
    await expect.poll(() => error.textContent()).toBe('ensure this value is less than or equal to 4');
    expect(await field(page, 'samples').getAttribute('aria-invalid')).toBe('true');
    await field(page, 'samples').fill('two');
    await expect.poll(() => error.textContent()).toBe('value is not a valid integer');
    await field(page, 'samples').fill('2');
    await expect.poll(() => error.count()).toBe(0);
    // Nothing was submitted: the only keyed call is the gallery's listing.
    expect(keyed.filter((line) => line.startsWith('POST'))).toEqual([]);
  });

  it('shows a refused key clearly', async () => {
    const { page } = await open('/sd/text2image/v1', { key: 'not-a-real-key' });
    const refused = page.getByTestId('key-refused');
    await refused.waitFor();
    expect(await refused.textContent()).toMatch(/refused this key.*401/);
  });

  it('runs a sandbox text2image live, shows its images with size, seed and time, and sends the key only to the API', async () => {
    const { page, keyed } = await open('/sd/text2image/v1');
    await fillText2Image(page, 'a lighthouse in the playground');
    // Run from the keyboard.
    await page.getByRole('button', { name: 'Run' }).focus();
    await page.keyboard.press('Enter');
    // The live view: running, with the progress the sandbox reports after its first of two images,
    // and the preview it sent then, as the picture forms.
    await page.waitForFunction(
      () =>
        document.querySelector('[data-testid="run-state"]')?.textContent === 'Running' &&
        document.querySelector('progress')?.value === 0.5 &&
        /^\d+\.\d s$/.test(document.querySelector('[data-testid="elapsed"]')?.textContent ?? '') &&
        (document.querySelector('[data-testid="run-preview"]')?.getAttribute('src') ?? '').startsWith(
          'data:image/jpeg;base64,',
        ),
      undefined,
      { polling: 'raf', timeout: 30_000 },
    );

    expect(await finalState(page)).toBe('Succeeded');
    // The preview goes once the task has ended: its images stand in its place.
    expect(await page.getByTestId('run-preview').count()).toBe(0);
    const images = page.getByRole('img', { name: /^Output \d of 2$/ });
    expect(await images.count()).toBe(2);
    await expect.poll(() => page.getByTestId('output-size').first().textContent()).toBe('64 × 64 px');
    // The seed the API drew, read from the task listing once the task ended.
    await expect
      .poll(() => page.locator('figcaption').first().textContent())
      .toMatch(/^64 × 64 px · seed \d+ · took \d+\.\d s/);
    expect(await page.getByRole('link', { name: /Download/ }).count()).toBe(2);
    // The key went to the API's origin only.
    expect(keyed.length).toBeGreaterThan(0);
    expect(keyed.every((line) => new URL(line.split(' ')[1]!).origin === env.site.api.url)).toBe(true);

    // After a reload the task is in the gallery, and reopens its request in the form.
    const taskId = (await page.getByTestId('task-id').textContent())!;
    await page.reload();
    await page.waitForSelector('html[data-has-hydrated="true"]');
    const item = page.locator(`[data-task-id="${taskId}"]`);
    await item.waitFor();
    await field(page, 'prompt').fill('something else');
    await item.getByRole('button', { name: /Open in form/ }).click();
    await expect.poll(() => field(page, 'prompt').inputValue()).toBe('a lighthouse in the playground');
    await showOptional(page);
    expect(await field(page, 'samples').inputValue()).toBe('2');
    expect(Number(await field(page, 'seed').inputValue())).toBeGreaterThanOrEqual(0);
  });

  it("shows a waiting task's place in the queue, and cancels it", async () => {
    // A slow task of the caller's takes the worker's one slot: the playground's task waits behind it.
    const ahead = await direct.submit('/sd/text2image/v1', { prompt: SLOW, ...TASK }, env.site.key);
    try {
      await expect
        .poll(async () => {
          const listed = await fetch(`${env.site.api.url}/tasks/v1?status=running`, {
            headers: { 'API-Key': env.site.key },
          });
          return ((await listed.json()) as { tasks: { id: string }[] }).tasks.map((task) => task.id);
        })
        .toContain(ahead);
      const { page } = await open('/sd/text2image/v1');
      await fillText2Image(page, SLOW);
      await page.getByRole('button', { name: 'Run' }).click();
      // The place in line is an estimate from a queue snapshot a few seconds old at most: the
      // live view shows it as the status stream sends it again.
      await expect
        .poll(() => page.getByRole('status').first().textContent(), { timeout: 30_000 })
        .toContain('next in line');
      const cancel = page.getByRole('button', { name: 'Cancel' });
      await expect.poll(() => cancel.isEnabled()).toBe(true);
      await cancel.click();
      expect(await finalState(page)).toBe('Cancelled');
      expect(await page.getByRole('alert').filter({ hasText: 'cancelled by the caller' }).count()).toBe(1);
    } finally {
      // The slow task would hold the one slot for two minutes: the tests after this one need it.
      await direct.call('POST', `/sd/text2image/v1/cancel/${ahead}`, env.site.key);
    }
    expect((await direct.settle('/sd/text2image/v1', ahead, env.site.key)).status).toBe('FAILURE');
  });

  it('removes a background on the cpu engine from an uploaded image file', async () => {
    const { page } = await open('/bgremover/v1');
    const scene = (await productScene(256, 192)).scene;
    await page.locator('input[type="file"][data-upload-for="init_image"]').setInputFiles({
      name: 'scene.png',
      mimeType: 'image/png',
      buffer: scene,
    });
    await uploaded(page, 'init_image');
    await page.getByRole('button', { name: 'Run' }).click();
    expect(await finalState(page, 150_000)).toBe('Succeeded');
    // The output's size shows once its image has loaded: on a busy machine that can take longer
    // than a poll's default 5 s.
    await expect
      .poll(() => page.getByTestId('output-size').first().textContent(), { timeout: 30_000 })
      .toBe('256 × 192 px');
    const url = (await page
      .getByRole('link', { name: /Download/ })
      .first()
      .getAttribute('href'))!;
    // A PNG's header: width and height, then colour type 6 (RGBA): the background is transparent.
    const png = Buffer.from(await (await fetch(url)).arrayBuffer());
    expect([png.readUInt32BE(16), png.readUInt32BE(20), png[25]]).toEqual([256, 192, 6]);
  }, 180_000);

  it('takes an image dropped on its field, and an output of the gallery, as the input', async () => {
    // A finished task of the caller's, for the gallery.
    const id = await direct.submit(
      '/sd/text2image/v1',
      { prompt: 'a gallery lighthouse', ...TASK },
      env.site.key,
    );
    const done = await direct.settle('/sd/text2image/v1', id, env.site.key);
    expect(done.status).toBe('SUCCESS');
    const output = (done.download_urls as string[])[0]!;

    const { page } = await open('/sd/image2image/v1');
    // A file dropped on the field is uploaded, and the field takes its URL.
    const dropped = (await productScene(64, 64)).scene.toString('base64');
    const dataTransfer = await page.evaluateHandle((base64) => {
      const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
      const transfer = new DataTransfer();
      transfer.items.add(new File([bytes], 'dropped.png', { type: 'image/png' }));
      return transfer;
    }, dropped);
    await page.locator('[data-field="init_image"]').dispatchEvent('drop', { dataTransfer });
    const upload = await uploaded(page, 'init_image');
    expect(upload).not.toBe(output);

    // "Use as init_image" on the gallery's task puts its output in the field.
    const item = page.locator(`[data-task-id="${id}"]`);
    await item.waitFor();
    await item.getByRole('button', { name: /Use as init_image/ }).click();
    await expect.poll(() => field(page, 'init_image').inputValue()).toBe(output);
  });

  it('copies the request on screen as curl, and the copied command submits it', async () => {
    const { page } = await open('/sd/text2image/v1');
    await fillText2Image(page, 'a lighthouse from curl');
    const copy = page.locator('[role="tabpanel"]:not([hidden])').getByRole('button', { name: /Copy/ });
    await copy.click();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    expect(copied).toContain(`curl -s ${env.site.api.url}/sd/text2image/v1`);
    expect(copied).toContain('"prompt": "a lighthouse from curl"');
    // The submission, as a reader pastes it into a shell with their key in the environment.
    const submit = copied.split('\n\n')[0]!;
    const { stdout } = await run('bash', ['-c', submit], {
      env: { ...process.env, IMAGEGEN_API_KEY: env.site.key },
    });
    const accepted = JSON.parse(stdout) as { status: string; id: string };
    expect(accepted.status).toBe('PENDING');
    const listed = await fetch(`${env.site.api.url}/tasks/v1?limit=5`, {
      headers: { 'API-Key': env.site.key },
    });
    const { tasks } = (await listed.json()) as { tasks: { id: string; request: Record<string, unknown> }[] };
    expect(tasks.find((task) => task.id === accepted.id)?.request).toMatchObject({
      prompt: 'a lighthouse from curl',
      width: 64,
      height: 64,
      samples: 2,
    });
  });

  it("runs a pipeline's example as it is: its input images are samples the API serves itself", async () => {
    const { page } = await open('/sd/image2image/v1');
    expect(await field(page, 'init_image').inputValue()).toBe(sampleImageUrl(env.site.api.url, 'product'));
    await page.getByRole('button', { name: 'Run' }).click();
    expect(await finalState(page)).toBe('Succeeded');
    expect(await page.getByRole('img', { name: /^Output 1 of 1$/ }).count()).toBe(1);
  });

  it("shows an image2prompt task's prompt in the gallery, and keeps each card's buttons and times inside it", async () => {
    const described = await direct.submit(
      '/image2prompt/v1',
      { input_image: sampleImageUrl(env.site.api.url, 'small') },
      env.site.key,
    );
    const answer = await direct.settle('/image2prompt/v1', described, env.site.key);
    expect(answer.status).toBe('SUCCESS');
    expect(typeof answer.prompt).toBe('string');
    const drawn = await direct.submit(
      '/sd/text2image/v1',
      { prompt: 'a gallery card', ...TASK },
      env.site.key,
    );
    expect((await direct.settle('/sd/text2image/v1', drawn, env.site.key)).status).toBe('SUCCESS');

    const { page } = await open('/sd/text2image/v1');
    const prompt = page.locator(`[data-task-id="${described}"]`).getByTestId('gallery-prompt');
    await expect.poll(() => prompt.textContent(), { timeout: 30_000 }).toBe(answer.prompt);
    const card = page.locator(`[data-task-id="${drawn}"]`);
    await card.getByRole('button', { name: /Use as ip_adapter_style_images/ }).waitFor();
    // Every button and line of every card lies within the card's box.
    const outside = await page.locator('[data-task-id]').evaluateAll((cards) =>
      cards.flatMap((item) => {
        const box = item.getBoundingClientRect();
        return Array.from(item.querySelectorAll('button, p'))
          .filter((inner) => {
            const r = inner.getBoundingClientRect();
            return r.left < box.left - 0.5 || r.right > box.right + 0.5;
          })
          .map((inner) => `${item.getAttribute('data-task-id')}: ${inner.textContent}`);
      }),
    );
    expect(outside).toEqual([]);
    // No number of a time (date, hours:minutes:seconds) is cut over two lines.
    const cut = await page.locator('[data-task-id] time').evaluateAll((times) =>
      times.flatMap((time) => {
        const text = time.firstChild;
        if (!text?.textContent) return [`${time.outerHTML}: no text`];
        return [...text.textContent.matchAll(/\d[\d/:.,-]*\d/g)]
          .filter((match) => {
            const range = document.createRange();
            range.setStart(text, match.index);
            range.setEnd(text, match.index + match[0].length);
            return new Set(Array.from(range.getClientRects(), (rect) => Math.round(rect.top))).size > 1;
          })
          .map((match) => match[0]);
      }),
    );
    expect(await page.locator('[data-task-id] time').count()).toBeGreaterThan(0);
    expect(cut).toEqual([]);
  }, 120_000);

  for (const colorScheme of ['light', 'dark'] as const) {
    for (const [width, height] of [
      [1280, 900],
      [390, 844],
    ] as const) {
      it(`finds no serious or critical axe violations (${colorScheme}, ${width} px)`, async () => {
        const { page } = await open('/bgremover/v1', { colorScheme, viewport: { width, height } });
        await page.locator('#gallery-heading').waitFor();
        await showOptional(page);
        expect(await page.locator('html').getAttribute('data-theme')).toBe(colorScheme);
        expect(await seriousViolations(page)).toEqual([]);
      });
    }
  }
});
