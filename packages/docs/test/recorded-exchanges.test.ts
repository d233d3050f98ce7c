import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createTestDatabase } from '@imagegen/server/testing';
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { recordExchanges, recordedPaths } from '../examples/record-exchanges.mts';
import { RECORDED_DIR, readRecordings } from '../examples/recordings.mts';
import { RecordedExchangeBody } from '../src/components/RecordedExchangeBody.tsx';
import { MOMENT_LABELS, recordingSlug } from '../src/components/recorded-exchange.ts';
import { docPages, plainText, taskPathsIn } from './support/doc-pages.ts';

const BUILD = path.resolve(import.meta.dirname, '../build');
const RECORD = 'npm run --silent docs:examples';

/** The task paths a page shows how to call: those of its endpoint summaries and request samples. */
const calledPaths = (text: string) => taskPathsIn(text, ['EndpointSummary', 'RequestExamples']);
const recordedOn = (text: string) => taskPathsIn(text, ['RecordedExchange']);

describe('the recorded exchanges', () => {
  it('are one file for each task endpoint of the contract', () => {
    const files = readdirSync(RECORDED_DIR).filter((name) => name.endsWith('.json'));
    expect(files.sort(), `run ${RECORD} to record them`).toEqual(
      recordedPaths()
        .map((p) => `${recordingSlug(p)}.json`)
        .sort(),
    );
  });

  it('are what the product answers now', async () => {
    const db = await createTestDatabase();
    try {
      const committed = readRecordings();
      for (const now of await recordExchanges(db.pool)) {
        expect
          .soft(
            now,
            `${now.path}: the API no longer answers as its recording says. If the change is meant, run ` +
              `${RECORD} and commit packages/docs/examples/recorded/`,
          )
          .toEqual(committed[now.path]);
      }
    } finally {
      await db.drop();
    }
    // The comfyui engine and the cpu engine's real models, one task after another: seconds on a loaded machine.
  }, 900_000);

  it('show every moment of a task: queued, claimed, sampling where the engine samples, ended', () => {
    const recordings = readRecordings();
    for (const recording of Object.values(recordings)) {
      const moments = recording.answers.map((answer) => answer.moment);
      expect(moments.slice(0, 3), recording.path).toEqual(['submitted', 'queued', 'started']);
      expect(moments.at(-1), recording.path).toBe('finished');
    }
    expect(recordings['/outpainting/v1']?.answers.map((answer) => answer.moment)).toEqual([
      'submitted',
      'queued',
      'started',
      'sampling',
      'finished',
    ]);
    expect(recordings['/sd/text2image/v1']?.answers.find((a) => a.moment === 'sampling')?.body).toMatchObject(
      {
        status: 'PENDING',
        progress: expect.any(Number),
        eta_seconds: '<seconds>',
      },
    );
    expect(recordings['/bgremover/v1']?.engine).toBe('cpu');
    expect(recordings['/train_model/v1']?.answers.at(-1)?.body).toMatchObject({ status: 'completed' });
  });
});

describe('the docs pages', () => {
  it('show the recorded exchange of every task endpoint they show how to call', async () => {
    const pages = await docPages();
    const calling = pages.filter((page) => calledPaths(page.text).length > 0);
    expect(calling.length).toBeGreaterThan(30);
    for (const page of pages) {
      expect(recordedOn(page.text), page.name).toEqual(calledPaths(page.text));
      if (calledPaths(page.text).length > 0) {
        expect(page.text, page.name).toContain(
          "import RecordedExchange from '@site/src/components/RecordedExchange';",
        );
      }
    }
  });

  it('render a recording as its request, every answer in order, and what its links served', () => {
    for (const recording of Object.values(readRecordings())) {
      const html = renderToStaticMarkup(createElement(RecordedExchangeBody, { recording }));
      const text = plainText(html);
      expect(html).toContain(`data-recorded-path="${recording.path}"`);
      expect(html).toContain(`data-engine="${recording.engine}"`);
      expect(text).toContain(`POST ${recording.path}`);
      expect(text).toContain(JSON.stringify(recording.request.body, null, 2));
      let from = 0;
      for (const answer of recording.answers) {
        const at = text.indexOf(
          `${MOMENT_LABELS[answer.moment]}: ${answer.method} ${answer.path} answers ${answer.status}:`,
          from,
        );
        expect(at, `${recording.path} ${answer.moment}`).toBeGreaterThanOrEqual(from);
        expect(text.indexOf(JSON.stringify(answer.body, null, 2), at)).toBeGreaterThan(at);
        from = at + 1;
      }
    }
    const outpainting = readRecordings()['/outpainting/v1']!;
    const text = plainText(
      renderToStaticMarkup(createElement(RecordedExchangeBody, { recording: outpainting })),
    );
    expect(text).toContain('Recorded with the comfyui engine against the repository’s fake ComfyUI server');
    expect(text).toMatch(/Its download links served 1 PNG image, \d+ × \d+\./);
  });

  it('carry their recordings in the built site', async () => {
    expect(existsSync(path.join(BUILD, '404.html')), 'build the site first: npm run build:docs').toBe(true);
    const recordings = readRecordings();
    for (const page of await docPages()) {
      const paths = recordedOn(page.text);
      if (paths.length === 0) continue;
      const html = readFileSync(path.join(BUILD, page.name.replace(/\.mdx?$/, ''), 'index.html'), 'utf8');
      // The built pages are minified: attribute values may go without quotes.
      const sections = html.split(/<section\b/).slice(1);
      for (const taskPath of paths) {
        const section = sections.find((each) =>
          new RegExp(`^[^>]*data-recorded-path="?${taskPath}[\\s">]`).test(each),
        );
        expect(section, `${page.name} shows ${taskPath}`).toBeDefined();
        const moments = [...section!.split('</section>')[0]!.matchAll(/data-moment="?(\w+)/g)].map(
          (m) => m[1],
        );
        expect(moments, `${page.name} ${taskPath}`).toEqual(
          recordings[taskPath]!.answers.map((a) => a.moment),
        );
      }
    }
  });
});
