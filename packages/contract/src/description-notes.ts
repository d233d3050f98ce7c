import type { Endpoint } from './endpoint.ts';

/**
 * Sentences a deployment adds to the contract's descriptions. The contract words each operation
 * and field as it holds on every engine; what one engine does with it (the weights a model name
 * runs on, a checker's thresholds) is that engine's fact, stated in its own package (its
 * catalogue's `notes`). The program that knows the engines hands their notes in, and the OpenAPI
 * document, the docs and the `imagegen` command's help append them with the functions here.
 */
export interface DescriptionNotes {
  /**
   * Per pipeline path: sentences at the end of the operation description's first paragraph (the
   * row's own words; the paragraphs after it say what every task row says).
   */
  readonly pipelines?: Readonly<Record<string, string>>;
  /** Per field name: sentences after that field's description, in every schema that has it. */
  readonly fields?: Readonly<Record<string, string>>;
  /**
   * Per schema title (every component schema has one), per field name: sentences after that
   * field's description in that schema alone, for a field whose name means something else in
   * other schemas (`type`, `prompt`).
   */
  readonly schemaFields?: Readonly<Record<string, Readonly<Record<string, string>>>>;
}

type Described = { readonly description?: string };

/** The texts that are there, a space between. */
function joined(...texts: readonly (string | undefined)[]): string {
  return texts.filter(Boolean).join(' ');
}

/** The entry a record has under its own key (never one of Object's, a field named `constructor`). */
function own<T>(record: Readonly<Record<string, T>> | undefined, key: string): T | undefined {
  return record && Object.hasOwn(record, key) ? record[key] : undefined;
}

/** An endpoint's description with its pipeline's notes at the end of its first paragraph. */
export function notedDescription(
  endpoint: Pick<Endpoint, 'path' | 'description'>,
  notes: DescriptionNotes = {},
): string {
  const note = own(notes.pipelines, endpoint.path);
  if (!note) return endpoint.description;
  const [first, ...rest] = endpoint.description.split('\n\n');
  return [joined(first, note), ...rest].join('\n\n');
}

/**
 * An object schema whose properties the notes name carry their notes, those of `fields` first, then
 * those `schemaFields` gives the schema's title: a copy where a note applies, the schema itself
 * where none does.
 */
export function withFieldNotes<Schema>(schema: Schema, notes: DescriptionNotes = {}): Schema {
  const { title, properties } = (schema ?? {}) as {
    title?: unknown;
    properties?: Record<string, Described>;
  };
  const scoped = typeof title === 'string' ? own(notes.schemaFields, title) : undefined;
  const noteOf = (name: string) => joined(own(notes.fields, name), own(scoped, name));
  if (!properties || !Object.keys(properties).some((name) => noteOf(name))) return schema;
  const noted = Object.entries(properties).map(([name, property]) => {
    const note = noteOf(name);
    return [name, note ? { ...property, description: joined(property.description, note) } : property];
  });
  return { ...schema, properties: Object.fromEntries(noted) };
}

/** Texts by name, several sources as one in the order given: a name two sources note gets both. */
function mergeTexts(all: readonly (Readonly<Record<string, string>> | undefined)[]): Record<string, string> {
  const merged: Record<string, string> = {};
  for (const texts of all) {
    for (const [name, text] of Object.entries(texts ?? {})) merged[name] = joined(merged[name], text);
  }
  return merged;
}

/** Several engines' notes as one, in the order given: a path or field two engines note gets both. */
export function mergeNotes(all: readonly (DescriptionNotes | undefined)[]): DescriptionNotes {
  const titles = new Set(all.flatMap((notes) => Object.keys(notes?.schemaFields ?? {})));
  return {
    pipelines: mergeTexts(all.map((notes) => notes?.pipelines)),
    fields: mergeTexts(all.map((notes) => notes?.fields)),
    schemaFields: Object.fromEntries(
      [...titles].map((title) => [title, mergeTexts(all.map((notes) => notes?.schemaFields?.[title]))]),
    ),
  };
}
