/**
 * The text of a page's engine note, from the engine catalogue the `prebuild`/`prestart` scripts
 * write to .generated/engines.json (`engineCatalog()` of `@imagegen/engines`, over the engines the program ships): which
 * engine serves an endpoint is decided there, with the registry's own rule and default order, and
 * only worded here. Text is Markdown with `code` spans only.
 */
import type { DescriptionNotes } from '@imagegen/contract';

/** How a path is answered (`AnswerKind` of the engines package). */
export type NoteKind = 'real' | 'placeholder' | 'registration' | 'none';

/** What an engine's own servers need for one pipeline (`ServerRequirements` of the engines package). */
export interface ServerNeeds {
  readonly nodes: readonly string[];
  /** The custom node packs some of those classes come from. */
  readonly packs?: readonly {
    readonly name: string;
    readonly repository: string;
    /** The request fields that need the pack; absent: every request does. */
    readonly when?: string;
  }[];
  readonly models: readonly { readonly folder: string; readonly what: string }[];
  /** Request fields the engine refuses on this pipeline, and why (the words of the task's error). */
  readonly refuses?: readonly { readonly field: string; readonly why: string }[];
  /** Request fields the engine takes no notice of in some case, and why (the words of the task's note). */
  readonly ignores?: readonly { readonly field: string; readonly why: string }[];
}

/** The shape of .generated/engines.json (`EngineCatalog` of the engines package). */
export interface EngineCatalogData {
  /** What the engines of the order add to the API's descriptions (the playground appends them). */
  readonly notes: DescriptionNotes;
  readonly defaultOrder: readonly string[];
  readonly paths: Readonly<
    Record<string, { readonly engine: string | null; readonly kind: NoteKind; readonly runs?: string }>
  >;
  /** Engines that run on servers of their own (comfyui), by name. */
  readonly serverEngines?: Readonly<
    Record<string, { readonly setting: string; readonly pipelines: Readonly<Record<string, ServerNeeds>> }>
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

const code = (text: string) => `\`${text}\``;

function list(items: readonly string[]): string {
  return items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

/** "the node packs `P` (repository); the node classes `A` and `B`; in `checkpoints`, …; in `loras`, …" */
function needsText(needs: ServerNeeds): string {
  const packs = needs.packs?.length
    ? `the node ${needs.packs.length === 1 ? 'pack' : 'packs'} ${list(needs.packs.map((pack) => `${code(pack.name)} (${pack.repository})${pack.when ? ` ${pack.when}` : ''}`))}; `
    : '';
  const models = needs.models.map((model) => `; in ${code(model.folder)}, ${model.what}`).join('');
  return `${packs}the node classes ${list(needs.nodes.map(code))}${models}`;
}

/** " It refuses `a` (why) and `b` (why): the task fails naming the field." or nothing. */
function refusalsText(engine: string, needs: ServerNeeds): string {
  if (!needs.refuses?.length) return '';
  const each = needs.refuses.map((refusal) => `${code(refusal.field)} (${refusal.why})`);
  return ` The ${code(engine)} engine refuses ${list(each)}: such a task fails with an error naming the field.`;
}

/** " It takes no notice of `a` (why) …: such a task runs, and its status's `notes` name the field." or nothing. */
function ignoresText(engine: string, needs: ServerNeeds): string {
  if (!needs.ignores?.length) return '';
  const each = needs.ignores.map((ignored) => `${code(ignored.field)} (${ignored.why})`);
  return ` In some cases the ${code(engine)} engine takes no notice of ${list(each)}: such a task runs, and its status's \`notes\` name the field.`;
}

/**
 * The server engines that serve `path` besides the one that answers it by default (`answering`),
 * each in one sentence: how to enable it, and what its servers need for this path.
 */
function serverEngineSentences(catalog: EngineCatalogData, path: string, answering: string | null): string {
  const ahead = answering ? ` ahead of ${code(answering)}` : '';
  return Object.entries(catalog.serverEngines ?? {})
    .filter(([name, engine]) => name !== answering && engine.pipelines[path])
    .map(
      ([name, engine]) =>
        ` Where \`IMAGEGEN_ENGINES\` enables the ${code(name)} engine${ahead}, with its servers in ` +
        `${code(engine.setting)}, ${code(path)} is served for real on those servers; they need ` +
        `${needsText(engine.pipelines[path]!)}.${refusalsText(name, engine.pipelines[path]!)}` +
        ignoresText(name, engine.pipelines[path]!),
    )
    .join('');
}

/** What answers `path` on a deployment of this release, in one paragraph. */
export function engineNote(catalog: EngineCatalogData, path: string): EngineNoteText {
  const answer = catalog.paths[path];
  if (!answer) throw new Error(`EngineNote: ${path} is not a task endpoint of the contract`);
  const { engine, kind } = answer;
  const others = serverEngineSentences(catalog, path, engine);
  if (kind === 'real') {
    const runs = answer.runs ? `: ${answer.runs}` : '';
    const servers = engine ? catalog.serverEngines?.[engine] : undefined;
    const needs = servers?.pipelines[path];
    const text =
      servers && needs
        ? `${code(path)} is served for real by the ${code(engine!)} engine on the servers ` +
          `${code(servers.setting)} names${runs}; they need ${needsText(needs)}.${refusalsText(engine!, needs)}` +
          ignoresText(engine!, needs)
        : `${code(path)} is served for real by the ${code(engine!)} engine on every deployment of this ` +
          `release${runs}. It runs on the CPU: no GPU and no extra server are needed.`;
    return { path, engine, kind, text: `${text}${others}` };
  }
  if (kind === 'placeholder') {
    const answered = others
      ? `By default \`${path}\` is answered by the \`${engine}\` engine`
      : `No engine of this release serves \`${path}\` for real yet: it is answered by the \`${engine}\` engine on every deployment`;
    const what =
      path === TRAINING_PATH
        ? `${answered}, which walks through the training states and registers a model tagged ` +
          '`sandbox` whose description says so; no weights are trained.'
        : `${answered}, with visibly labelled placeholder images (each says it is sandbox ` +
          'output and lists the pipeline, prompt, seed and parameters).';
    return {
      path,
      engine,
      kind,
      text: `${what} Request and response shapes are final, so integrations built against the sandbox keep working.${others}`,
    };
  }
  if (kind === 'registration') {
    return {
      path,
      engine: null,
      kind,
      text:
        'With the `comfyui` engine and `COMFYUI_MODELS_DIR` set, the model file is stored where the ComfyUI ' +
        'servers read it: `/load_model/v1` downloads `model_url` (capped by `MODEL_MAX_BYTES`, its sha256 ' +
        "recorded) and `/sync_model/v1` copies it to a server's own folder, and generations load it by its " +
        `id. Without them, \`${path}\` records the model and marks it ready, so requests can name it; a ` +
        'generation that names it is answered by the engine of its own endpoint, which does not load the file.',
    };
  }
  return {
    path,
    engine: null,
    kind,
    text: `No engine of this release serves \`${path}\`: its tasks fail with \`no engine serves ${path}\`.${others}`,
  };
}
