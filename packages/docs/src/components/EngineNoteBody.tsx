import type { ReactNode } from 'react';
import { type EngineCatalogData, engineNote } from './engine-note.ts';

/** Renders the `code` spans of a note; the rest stays plain text. */
export function InlineCode({ text }: { text: string }): ReactNode {
  return text.split(/(`[^`]+`)/).map((part, i) =>
    part.startsWith('`') && part.endsWith('`') ? (
      // biome-ignore lint/suspicious/noArrayIndexKey: the split is stable for a given text
      <code key={i}>{part.slice(1, -1)}</code>
    ) : (
      part
    ),
  );
}

/** One paragraph per endpoint, from the engine catalogue. Kept free of theme imports for tests. */
export function EngineNoteBody({
  catalog,
  paths,
}: {
  catalog: EngineCatalogData;
  paths: readonly string[];
}): ReactNode {
  return paths.map((path) => {
    const note = engineNote(catalog, path);
    return (
      <p key={path} data-engine-path={path} data-engine={note.engine ?? 'none'} data-engine-kind={note.kind}>
        <InlineCode text={note.text} />
      </p>
    );
  });
}
