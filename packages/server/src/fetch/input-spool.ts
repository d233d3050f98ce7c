import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** Where an input image's bytes are kept once checked, and how an engine reads them back. */
export interface KeptBytes {
  /** The file that holds them, when they are on disk. */
  readonly path?: string;
  read(): Promise<Buffer>;
}

/**
 * A folder of one attempt's input images (under the system's temporary folder, `TMPDIR`): each
 * image is written there as soon as it has been fetched, and the engine reads it back when it uses
 * it, so a task's inputs (up to TASK_MAX_INPUT_BYTES) are never all in memory at once, only the
 * ones being fetched or used. The folder is removed when the attempt ends.
 */
export class InputSpool {
  private files = 0;

  private constructor(readonly dir: string) {}

  static async open(): Promise<InputSpool> {
    return new InputSpool(await mkdtemp(path.join(tmpdir(), 'imagegen-inputs-')));
  }

  async keep(data: Buffer): Promise<KeptBytes> {
    const file = path.join(this.dir, String(this.files++));
    await writeFile(file, data);
    return { path: file, read: () => readFile(file) };
  }

  async close(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }
}

/** Bytes kept in memory: an image checked outside a task (an upload, a test). */
export function inMemory(data: Buffer): KeptBytes {
  return { read: async () => data };
}
