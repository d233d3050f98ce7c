import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { attemptPreviews, MAX_PREVIEW_BYTES } from '../../src/tasks/previews/attempt-previews.ts';
import type { TaskRecord } from '../../src/tasks/types.ts';
import type { WorkerContext } from '../../src/tasks/worker-context.ts';
import { eventually } from '../support/fakes.ts';

/**
 * The worker's side of live previews, against a recording stand-in for the database: the newest of
 * many previews is stored, at most once per interval, converted to JPEG; the stored one is deleted
 * when the attempt stops.
 */

const TASK = { id: '00000000-0000-4000-8000-000000000001', endpoint: '/sd/text2image/v1' } as TaskRecord;

function recorder() {
  const statements: { name: string; values: unknown[] }[] = [];
  const lines: string[] = [];
  const ctx = {
    pool: {
      async query(statement: { name: string; values: unknown[] }) {
        statements.push(statement);
        return { rowCount: 1, rows: [] };
      },
    },
    log: (line: string) => lines.push(line),
  } as unknown as WorkerContext;
  const saved = () => statements.filter((statement) => statement.name === 'saveTaskPreview');
  return { ctx, statements, saved, lines };
}

const jpeg = (n: number) => ({ data: Buffer.from([0xff, 0xd8, n]), contentType: 'image/jpeg' as const });

describe("an attempt's previews", () => {
  it('stores the first at once, then only the newest once the interval has passed', async () => {
    const { ctx, saved, statements } = recorder();
    const previews = attemptPreviews(ctx, TASK, 'worker-1:lease', 50);
    for (let n = 0; n < 100; n++) previews.preview(jpeg(n));
    await eventually(async () => (saved().length === 2 ? true : undefined));
    expect(saved().map((statement) => (statement.values[3] as Buffer)[2])).toEqual([0, 99]);
    expect(saved()[0]!.values.slice(0, 3)).toEqual([TASK.id, 'worker-1:lease', 'image/jpeg']);
    await previews.stop();
    expect(saved()).toHaveLength(2);
    expect(statements.at(-1)).toMatchObject({ name: 'deleteTaskPreview', values: [TASK.id] });
    // Nothing is stored after the attempt stopped.
    previews.preview(jpeg(100));
    expect(saved()).toHaveLength(2);
  });

  it('stores a PNG preview as a JPEG', async () => {
    const { ctx, saved } = recorder();
    const previews = attemptPreviews(ctx, TASK, 'worker-1:lease', 50);
    const png = await sharp({ create: { width: 16, height: 8, channels: 3, background: '#336699' } })
      .png()
      .toBuffer();
    previews.preview({ data: png, contentType: 'image/png' });
    await eventually(async () => (saved().length === 1 ? true : undefined));
    const stored = saved()[0]!.values[3] as Buffer;
    expect(await sharp(stored).metadata()).toMatchObject({ format: 'jpeg', width: 16, height: 8 });
    await previews.stop();
  });

  it('drops a preview too large to show, or one that is no picture, saying so once', async () => {
    const { ctx, saved, statements, lines } = recorder();
    const previews = attemptPreviews(ctx, TASK, 'worker-1:lease', 1);
    previews.preview({ data: Buffer.alloc(MAX_PREVIEW_BYTES + 1), contentType: 'image/jpeg' });
    await eventually(async () => (lines.length === 1 ? true : undefined));
    previews.preview({ data: Buffer.from('not a png'), contentType: 'image/png' });
    await previews.stop();
    expect(saved()).toHaveLength(0);
    expect(lines).toEqual([
      `task ${TASK.id}: a preview was dropped: ${MAX_PREVIEW_BYTES + 1} bytes, more than ${MAX_PREVIEW_BYTES}`,
    ]);
    // Nothing stored, nothing to delete.
    expect(statements).toHaveLength(0);
  });
});
