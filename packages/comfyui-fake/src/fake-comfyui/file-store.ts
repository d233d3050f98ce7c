import { createHash, randomBytes } from 'node:crypto';
import path from 'node:path/posix';
import type { FileRef } from '@imagegen/engine-comfyui/engine';
import sharp from 'sharp';
import { renderPng } from './fake-images.ts';
import type { Picture } from './graph-shapes.ts';

/**
 * The fake's input, output and temp folders, in memory. Uploads keep their bytes; saved images
 * keep what they show and are drawn when first viewed (so a prompt "runs" in no time). Files
 * outlive a restart, as files on disk do.
 */

type Folder = FileRef['type'];

type Stored =
  | {
      readonly bytes: Buffer;
      readonly size: { width: number; height: number } | undefined;
      readonly hash: string;
    }
  | {
      readonly picture: Picture;
      readonly index: number;
      /** The text SaveImage writes into the PNG (ComfyUI's graph). */
      readonly text: Readonly<Record<string, string>>;
      png?: Promise<Buffer>;
    };

export class FileStore {
  private readonly files = new Map<string, Stored>();
  private readonly counters = new Map<string, number>();
  /** The input folder's names, kept apart: LoadImage's list is read on every prompt. */
  private readonly inputs = new Set<string>();
  /** Changes whenever a file is added to the input folder. */
  inputVersion = 0;

  /** `POST /upload/image`'s naming: an identical file keeps its name, another gets `x (1).png`. */
  async upload(folder: Folder, subfolder: string, filename: string, bytes: Buffer, overwrite: boolean) {
    const hash = createHash('sha256').update(bytes).digest('hex');
    const { name: stem, ext } = path.parse(filename);
    let name = filename;
    let duplicate = false;
    for (let i = 1; !overwrite && this.files.has(key(folder, subfolder, name)); i++) {
      const existing = this.files.get(key(folder, subfolder, name))!;
      if ('hash' in existing && existing.hash === hash) {
        duplicate = true;
        break;
      }
      name = `${stem} (${i})${ext}`;
    }
    if (!duplicate) {
      const size = await sharp(bytes)
        .metadata()
        .then(({ width, height }) => (width && height ? { width, height } : undefined))
        .catch(() => undefined);
      this.files.set(key(folder, subfolder, name), { bytes, size, hash });
      if (folder === 'input') {
        this.inputs.add(key(folder, subfolder, name).slice('input/'.length));
        this.inputVersion += 1;
      }
    }
    return name;
  }

  /** A file by the name a graph gives it (`sub/x.png`) in a folder. */
  exists(folder: Folder, name: string): boolean {
    return this.files.has(`${folder}/${name}`);
  }

  /** An input image's size, for LoadImage. */
  inputImage(name: string): { width: number; height: number } | undefined {
    const stored = this.files.get(`input/${name}`);
    return stored && 'size' in stored ? stored.size : undefined;
  }

  /** An input file's content hash (ComfyUI reruns LoadImage when the file changes). */
  inputHash(name: string): string {
    const stored = this.files.get(`input/${name}`);
    return stored && 'hash' in stored ? stored.hash : '';
  }

  /** The input folder's files, as LoadImage lists them. */
  inputNames(): string[] {
    return [...this.inputs];
  }

  /**
   * SaveImage / PreviewImage: one file per image of the batch, named `<prefix>_00001_.png` with the
   * counter after the highest one already in the folder; a prefix `a/b/img` saves into `a/b`.
   */
  save(
    folder: 'output' | 'temp',
    prefix: string,
    picture: Picture,
    text: Readonly<Record<string, string>> = {},
  ): FileRef[] {
    const normal = path.normalize(folder === 'temp' ? `${prefix}${randomLetters()}` : prefix);
    const subfolder = path.dirname(normal) === '.' ? '' : path.dirname(normal);
    const base = path.basename(normal);
    const counterKey = key(folder, subfolder, base);
    const files: FileRef[] = [];
    for (let index = 0; index < picture.batch; index++) {
      const counter = (this.counters.get(counterKey) ?? 0) + 1;
      this.counters.set(counterKey, counter);
      const filename = `${base}_${String(counter).padStart(5, '0')}_.png`;
      this.files.set(key(folder, subfolder, filename), { picture, index, text });
      files.push({ filename, subfolder, type: folder });
    }
    return files;
  }

  /**
   * SaveLoRANode: one file under the prefix, named as `folder_paths.get_save_image_path` numbers
   * it (the counter after the highest number read from the folder's names that start with the
   * prefix's name and `_`), `<name>_<counter>_.safetensors`, or `<name>_<steps>_steps_<counter>_`
   * when the node is given its step count. Answers where it lies; nothing reports it.
   */
  saveModel(prefix: string, steps: number | undefined, bytes: Buffer): FileRef {
    const normal = path.normalize(prefix);
    const subfolder = path.dirname(normal) === '.' ? '' : path.dirname(normal);
    const base = path.basename(normal);
    const inFolder = `output/${subfolder ? `${subfolder}/` : ''}`;
    let highest = 0;
    for (const name of this.files.keys()) {
      if (!name.startsWith(inFolder) || name.slice(inFolder.length).includes('/')) continue;
      const file = name.slice(inFolder.length);
      // map_filename: the name's first `len(base) + 1` characters, and the number after them.
      if (file.slice(0, base.length + 1) !== `${base}_`) continue;
      const digits = file.slice(base.length + 1).split('_')[0]!;
      highest = Math.max(highest, /^\d+$/.test(digits) ? Number(digits) : 0);
    }
    const counter = String(highest + 1).padStart(5, '0');
    const filename =
      steps === undefined
        ? `${base}_${counter}_.safetensors`
        : `${base}_${steps}_steps_${counter}_.safetensors`;
    const hash = createHash('sha256').update(bytes).digest('hex');
    this.files.set(key('output', subfolder, filename), { bytes, size: undefined, hash });
    return { filename, subfolder, type: 'output' };
  }

  /** A file's bytes for `/view`; undefined when there is none. */
  read(folder: Folder, subfolder: string, filename: string): Promise<Buffer> | undefined {
    const stored = this.files.get(key(folder, subfolder, filename));
    if (!stored) return undefined;
    if ('bytes' in stored) return Promise.resolve(stored.bytes);
    stored.png ??= renderPng(stored.picture, stored.index, stored.text);
    return stored.png;
  }
}

function key(folder: Folder, subfolder: string, filename: string): string {
  return `${folder}/${subfolder ? `${subfolder}/` : ''}${filename}`;
}

/** PreviewImage's random suffix (`ComfyUI_temp_abcde`). */
function randomLetters(): string {
  return [...randomBytes(5)].map((byte) => String.fromCharCode(97 + (byte % 26))).join('');
}
