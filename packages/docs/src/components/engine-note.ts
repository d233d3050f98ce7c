/**
 * The text of a page's engine note, from the engine catalogue the `prebuild`/`prestart` scripts
 * write to .generated/engines.json (packages/engines/src/catalog.ts): what serves an endpoint is
 * printed from the list the engines themselves declare, never copied into pages by hand.
 * Text is Markdown with `code` spans only.
 */

/** The shape of .generated/engines.json (`engineCatalog()` in the engines package). */
export interface EngineCatalogData {
  readonly defaultOrder: readonly string[];
  readonly engines: readonly {
    readonly name: string;
    readonly real: boolean;
    readonly pipelines: readonly string[];
    readonly runs?: Readonly<Record<string, string>>;
  }[];
  readonly registersWithoutEngine: readonly string[];
}

export type NoteKind = 'real' | 'placeholder' | 'registration' | 'none';

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
  const engine = catalog.defaultOrder
    .map((name) => catalog.engines.find((entry) => entry.name === name))
    .find((entry) => entry?.pipelines.includes(path));
  if (engine?.real) {
    const runs = engine.runs?.[path];
    return {
      path,
      engine: engine.name,
      kind: 'real',
      text:
        `\`${path}\` is served for real by the \`${engine.name}\` engine on every deployment of this ` +
        `release${runs ? `: ${runs}` : ''}. It runs on the CPU: no GPU and no extra server are needed.`,
    };
  }
  if (engine) {
    const what =
      path === TRAINING_PATH
        ? `No training engine ships yet: \`${path}\` is answered by the \`${engine.name}\` engine on every ` +
          'deployment of this release. It walks through the training states and registers a model tagged ' +
          '`sandbox` whose description says so; no weights are trained.'
        : `No diffusion engine ships yet: \`${path}\` is answered by the \`${engine.name}\` engine on every ` +
          'deployment of this release, with visibly labelled placeholder images (each says it is sandbox ' +
          'output and lists the pipeline, prompt, seed and parameters).';
    return {
      path,
      engine: engine.name,
      kind: 'placeholder',
      text: `${what} Request and response shapes are final, so integrations built against the sandbox keep working.`,
    };
  }
  if (catalog.registersWithoutEngine.includes(path)) {
    return {
      path,
      engine: null,
      kind: 'registration',
      text:
        `No engine of this release loads model weights: \`${path}\` records the model and marks it ready, ` +
        'so requests can name it; a generation that names it is answered by the engine of its own ' +
        'endpoint, which does not load the file.',
    };
  }
  return {
    path,
    engine: null,
    kind: 'none',
    text: `No engine of this release serves \`${path}\`: its tasks fail with \`no engine serves ${path}\`.`,
  };
}
