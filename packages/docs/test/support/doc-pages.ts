import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { endpoints } from '@imagegen/contract';

/** The docs pages, by path under `docs/`. */
export const DOCS_DIR = path.resolve(import.meta.dirname, '../../docs');

/** Task endpoints: an engine (or nothing) answers them. Records and uploads are answered by the API. */
export const TASK_PATHS: ReadonlySet<string> = new Set(
  endpoints
    .filter((e) => e.kind === 'generation' || e.kind === 'training' || e.kind === 'load_model')
    .map((e) => e.path),
);

export interface DocPage {
  /** The file's path under the folder, e.g. `Pipelines/Outpainting.mdx`. */
  readonly name: string;
  readonly text: string;
}

/** Every `.md`/`.mdx` page under `dir`. */
export async function docPages(dir: string = DOCS_DIR): Promise<DocPage[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const files = entries.filter((e) => e.isFile() && /\.mdx?$/.test(e.name));
  return Promise.all(
    files.map(async (e) => {
      const file = path.join(e.parentPath, e.name);
      return { name: path.relative(dir, file), text: await readFile(file, 'utf8') };
    }),
  );
}

/** The task paths a page names in `<Component path="…" />` tags of these components (POST operations only). */
export function taskPathsIn(text: string, components: readonly string[]): string[] {
  const found = new Set<string>();
  const tag = new RegExp(`<(${components.join('|')})\\b([^>]*)/>`, 'g');
  for (const [, , attributes = ''] of text.matchAll(tag)) {
    const pathAttribute = /\bpath="([^"]+)"/.exec(attributes)?.[1];
    if (pathAttribute && !attributes.includes('method="get"') && TASK_PATHS.has(pathAttribute)) {
      found.add(pathAttribute);
    }
  }
  return [...found].sort();
}

/** Markup to text: tags dropped, the few entities React writes decoded. */
export function plainText(html: string): string {
  return html
    .replace(/<[^>]+>/g, '')
    .replaceAll('&quot;', '"')
    .replaceAll('&#x27;', "'")
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&amp;', '&');
}
