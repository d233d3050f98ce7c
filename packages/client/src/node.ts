import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ImagegenClient, UploadFile } from './client.ts';

/**
 * @imagegen/client/node: the helpers that need a file system (Node 20+): upload local images,
 * save a task's outputs into a folder.
 */

/** Uploads local image files; answers their URLs, in order, to use as a request's image fields. */
export async function uploadFiles(
  client: ImagegenClient,
  files: readonly string[],
  options: { signal?: AbortSignal } = {},
): Promise<string[]> {
  const uploads: UploadFile[] = await Promise.all(
    files.map(async (file) => ({ name: path.basename(file), data: await readFile(file) })),
  );
  return client.uploadImages(uploads, options);
}

/**
 * Downloads each output link into `folder` (made if missing) and answers the files written. A
 * file is named `<prefix><the link's file name>` (`0.png`, `1.png`, or with the request's
 * `file_prefix`); give each task its own prefix (the CLI uses the task id) to keep several in one
 * folder. An existing file of that name is replaced.
 */
export async function saveOutputs(
  client: ImagegenClient,
  urls: readonly string[],
  folder: string,
  options: { signal?: AbortSignal; prefix?: string } = {},
): Promise<string[]> {
  await mkdir(folder, { recursive: true });
  const written: string[] = [];
  for (const [n, url] of urls.entries()) {
    const file = path.join(folder, `${options.prefix ?? ''}${fileNameOf(url, n)}`);
    await writeFile(file, await client.download(url, options.signal ? { signal: options.signal } : {}));
    written.push(file);
  }
  return written;
}

function fileNameOf(url: string, n: number): string {
  const last = decodeURIComponent(new URL(url).pathname.split('/').pop() ?? '');
  return /^[\w.-]+$/.test(last) && last !== '.' && last !== '..' ? last : `output-${n + 1}.png`;
}
