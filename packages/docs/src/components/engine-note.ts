/**
 * The text of a page's engine note, from the engine catalogue the `prebuild`/`prestart` scripts
 * write to .generated/engines.json (`engineCatalog()` in packages/engines/src/catalog.ts): which
 * engine serves an endpoint is decided there, with the registry's own rule and default order, and
 * only worded here. Text is Markdown with `code` spans only.
 */

/** How a path is answered (`AnswerKind` of the engines package). */
export type NoteKind = 'real' | 'placeholder' | 'registration' | 'none';

/** The shape of .generated/engines.json (`EngineCatalog` of the engines package). */
export interface EngineCatalogData {
  readonly defaultOrder: readonly string[];
  readonly paths: Readonly<
    Record<string, { readonly engine: string | null; readonly kind: NoteKind; readonly runs?: string }>
  >;
}

export interface EngineNoteText {
  readonly path: string;
  /** The engine that answers the path with the default engine order, if any. */
  readonly engine: string | null;
  readonly kind: NoteKind;
  readonly text: string;
}

const TRAINING_PATH = '/train_model/v1';

/** What answers `path` on a deployment of this release, in one paragraph. */
export function engineNote(catalog: EngineCatalogData, path: string): EngineNoteText {
  const answer = catalog.paths[path];
  if (!answer) throw new Error(`EngineNote: ${path} is not a task endpoint of the contract`);
  const { engine, kind } = answer;
  if (kind === 'real') {
    return {
      path,
      engine,
      kind,
      text:
        `\`${path}\` is served for real by the \`${engine}\` engine on every deployment of this ` +
        `release${answer.runs ? `: ${answer.runs}` : ''}. It runs on the CPU: no GPU and no extra server are needed.`,
    };
  }
  if (kind === 'placeholder') {
    const what =
      path === TRAINING_PATH
        ? `No training engine ships yet: \`${path}\` is answered by the \`${engine}\` engine on every ` +
          'deployment of this release. It walks through the training states and registers a model tagged ' +
          '`sandbox` whose description says so; no weights are trained.'
        : `No diffusion engine ships yet: \`${path}\` is answered by the \`${engine}\` engine on every ` +
          'deployment of this release, with visibly labelled placeholder images (each says it is sandbox ' +
          'output and lists the pipeline, prompt, seed and parameters).';
    return {
      path,
      engine,
      kind,
      text: `${what} Request and response shapes are final, so integrations built against the sandbox keep working.`,
    };
  }
  if (kind === 'registration') {
    return {
      path,
      engine: null,
      kind,
      text:
        `No engine of this release loads model weights: \`${path}\` records the model and marks it ready, ` +
        'so requests can name it; a generation that names it is answered by the engine of its own ' +
        'endpoint, which does not load the file.',
    };
  }
  return {
    path,
    engine: null,
    kind,
    text: `No engine of this release serves \`${path}\`: its tasks fail with \`no engine serves ${path}\`.`,
  };
}
