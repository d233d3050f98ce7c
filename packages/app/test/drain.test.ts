import { describe, expect, it } from 'vitest';
import { drain } from '../src/drain.ts';

const after = (ms: number, fail?: string) =>
  new Promise<void>((resolve, reject) => setTimeout(() => (fail ? reject(new Error(fail)) : resolve()), ms));

describe('a drain', () => {
  it('names the steps it still waits for, until each has ended', async () => {
    const lines: string[] = [];
    const started = Date.now();
    await drain(
      [
        ['the API', after(30)],
        ['the worker', after(250)],
      ],
      (line) => lines.push(line),
      100,
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(240);
    expect(lines.length).toBeGreaterThanOrEqual(1);
    expect(new Set(lines)).toEqual(new Set(['draining: waiting for the worker']));
  });

  it('logs a step that fails, and still waits for the others', async () => {
    const lines: string[] = [];
    let workerEnded = false;
    await drain(
      [
        ['the database', after(10, 'connection terminated')],
        ['the worker', after(60).then(() => (workerEnded = true))],
      ],
      (line) => lines.push(line),
    );
    expect(workerEnded).toBe(true);
    expect(lines).toEqual(['draining: the database failed: connection terminated']);
  });

  it('ends at once, saying nothing, when there is nothing to wait for', async () => {
    const lines: string[] = [];
    await drain([['the docs host', undefined]], (line) => lines.push(line), 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(lines).toEqual([]);
  });
});
