import { readdirSync } from 'node:fs';
import { createTestDatabase } from '@imagegen/server/testing';
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { recordProtocols } from '../examples/record-protocols.mts';
import { PROTOCOLS_DIR, readProtocolRecordings } from '../examples/recordings.mts';
import { ProtocolExchangeBody } from '../src/components/ProtocolExchangeBody.tsx';
import { docPages } from './support/doc-pages.ts';

const RECORD = 'npm run --silent docs:examples';

/** The protocol recordings each page shows, by the page's file. */
const SHOWN: Readonly<Record<string, readonly string[]>> = {
  'Introduction/openai-clients.mdx': ['openai-images', 'openai-edits'],
  'Introduction/mcp.mdx': ['mcp'],
};

describe('the recorded exchanges of the other protocols', () => {
  it('are what the product answers now', async () => {
    const db = await createTestDatabase();
    try {
      const committed = readProtocolRecordings();
      const now = await recordProtocols(db.pool);
      expect(now.map((recording) => recording.name).sort(), `run ${RECORD}`).toEqual(
        Object.keys(committed).sort(),
      );
      for (const recording of now) {
        expect
          .soft(
            recording,
            `${recording.name}: the API no longer answers as its recording says. If the change is meant, run ` +
              `${RECORD} and commit packages/docs/examples/recorded-protocols/`,
          )
          .toEqual(committed[recording.name]);
      }
    } finally {
      await db.drop();
    }
  }, 240_000);

  it('show a generation by link and in base64, an edit, errors, and a tool call with its progress', () => {
    const recordings = readProtocolRecordings();
    const images = recordings['openai-images']!.steps;
    expect(images.map((step) => step.answer.status)).toEqual([200, 200, 200, 400, 400]);
    expect(images[1]!.answer.served).toEqual(['PNG, 1216 × 832']);
    expect(images[2]!.answer.body).toMatchObject({ data: [{ b64_json: '<base64 of a PNG, 832 × 1216>' }] });
    expect(recordings['openai-edits']!.steps[0]!.answer.status).toBe(200);
    const call = recordings.mcp!.steps.at(-1)!.answer.events!;
    expect(call.slice(0, 2)).toMatchObject([
      { method: 'notifications/progress', params: { progress: 0, message: 'queued' } },
      { method: 'notifications/progress', params: { message: expect.stringMatching(/^running, \d+ %$/) } },
    ]);
    expect(call.at(-1)).toMatchObject({ result: { content: [{ type: 'text' }, { type: 'image' }] } });
  });

  it('are each shown on their page, and every recording is shown', async () => {
    const pages = new Map((await docPages()).map((page) => [page.name, page.text]));
    for (const [page, names] of Object.entries(SHOWN)) {
      for (const name of names)
        expect(pages.get(page), page).toContain(`<ProtocolExchange name="${name}" />`);
    }
    const files = readdirSync(PROTOCOLS_DIR).map((file) => file.replace(/\.json$/, ''));
    expect(files.sort()).toEqual(Object.values(SHOWN).flat().sort());
  });

  it('render each request and answer as HTTP writes them', () => {
    const recording = readProtocolRecordings()['openai-edits']!;
    const html = renderToStaticMarkup(createElement(ProtocolExchangeBody, { recording }));
    expect(html).toContain('POST /v1/images/edits');
    expect(html).toContain('image=@street.png (image/png, 640 × 480)');
    expect(html).toContain('HTTP 200');
    // The edit keeps the picture's 4:3 framing; its exact size is the engine's to choose.
    const served = recording.steps[0]!.answer.served!;
    expect(served).toEqual([expect.stringMatching(/^PNG, \d+ × \d+$/)]);
    const [width, height] = served[0]!.match(/\d+/g)!.map(Number);
    expect(width! / height!).toBeCloseTo(4 / 3, 2);
    expect(html).toContain(`The links served: ${served[0]}.`);
  });
});
