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

  it('adds what a step is still doing to its name, asked afresh at each report', async () => {
    const lines: string[] = [];
    let asked = 0;
    await drain(
      [
        ['the API', after(250), () => `${++asked} connection open`],
        ['the docs host', after(10)],
      ],
      (line) => lines.push(line),
      100,
    );
    expect(lines.length).toBeGreaterThanOrEqual(1);
    expect(lines[0]).toBe('draining: waiting for the API (1 connection open)');
    expect(lines.at(-1)).toBe(`draining: waiting for the API (${asked} connection open)`);
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
