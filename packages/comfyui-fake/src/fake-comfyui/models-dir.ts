import { readdirSync } from 'node:fs';
import path from 'node:path';

/**
 * The files of a ComfyUI `models/` folder as the server lists them: folder_paths lists only the
 * extensions ComfyUI loads (`supported_pt_extensions`), so a download's `.part` file never shows.
 */
const SUPPORTED_EXTENSIONS = new Set([
  '.ckpt',
  '.pt',
  '.pt2',
  '.bin',
  '.pth',
  '.safetensors',
  '.pkl',
  '.sft',
]);

/** Folder → listed files of `dir` (`<dir>/<folder>/<file>`), read now; a missing dir lists nothing. */
export function listModelsDir(dir: string): Record<string, string[]> {
  const listed: Record<string, string[]> = {};
  let folders: string[];
  try {
    folders = readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
  } catch {
    return listed;
  }
  for (const folder of folders) {
    listed[folder] = readdirSync(path.join(dir, folder))
      .filter((file) => SUPPORTED_EXTENSIONS.has(path.extname(file).toLowerCase()))
      .sort();
  }
  return listed;
}
