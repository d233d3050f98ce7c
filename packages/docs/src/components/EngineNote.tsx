import engines from '@site/.generated/engines.json';
import Admonition from '@theme/Admonition';
import type { ReactNode } from 'react';
import { EngineNoteBody } from './EngineNoteBody.tsx';
import type { EngineCatalogData } from './engine-note.ts';

interface Props {
  /** The endpoint the page documents, e.g. `/sd/text2image/v1`. */
  path?: string;
  /** Several endpoints, one paragraph each, in one note. */
  paths?: readonly string[];
}

/**
 * What answers this page's endpoint on a deployment of this release, printed at build time from
 * the engine catalogue (.generated/engines.json, written by the prebuild/prestart scripts).
 */
export default function EngineNote({ path, paths }: Props): ReactNode {
  const list = paths ?? (path ? [path] : []);
  if (list.length === 0) throw new Error('EngineNote needs a path or paths');
  return (
    <Admonition type="note" title="Engine">
      <EngineNoteBody catalog={engines as EngineCatalogData} paths={list} />
    </Admonition>
  );
}
