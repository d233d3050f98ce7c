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
  /** Per request field name: sentences after that field's description, in every schema that has it. */
  readonly fields?: Readonly<Record<string, string>>;
}

type Described = { readonly description?: string };

/** The texts that are there, a space between. */
function joined(...texts: readonly (string | undefined)[]): string {
  return texts.filter(Boolean).join(' ');
}

/** An endpoint's description with its pipeline's notes at the end of its first paragraph. */
export function notedDescription(
  endpoint: Pick<Endpoint, 'path' | 'description'>,
  notes: DescriptionNotes = {},
): string {
  const note = notes.pipelines?.[endpoint.path];
  if (!note) return endpoint.description;
  const [first, ...rest] = endpoint.description.split('\n\n');
  return [joined(first, note), ...rest].join('\n\n');
}

/**
 * An object schema whose properties the field notes name carry their notes: a copy where a note
 * applies, the schema itself where none does.
 */
export function withFieldNotes<Schema>(schema: Schema, notes: DescriptionNotes = {}): Schema {
  const fields = notes.fields ?? {};
  const properties = (schema as { properties?: Record<string, Described> } | undefined)?.properties;
  if (!properties || !Object.keys(properties).some((name) => Object.hasOwn(fields, name))) return schema;
  const noted = Object.entries(properties).map(([name, property]) =>
    Object.hasOwn(fields, name)
      ? [name, { ...property, description: joined(property.description, fields[name]) }]
      : [name, property],
  );
  return { ...schema, properties: Object.fromEntries(noted) };
}

/** Several engines' notes as one, in the order given: a path or field two engines note gets both. */
export function mergeNotes(all: readonly (DescriptionNotes | undefined)[]): DescriptionNotes {
  const merge = (key: keyof DescriptionNotes) => {
    const merged: Record<string, string> = {};
    for (const notes of all) {
      for (const [name, note] of Object.entries(notes?.[key] ?? {}))
        merged[name] = joined(merged[name], note);
    }
    return merged;
  };
  return { pipelines: merge('pipelines'), fields: merge('fields') };
}
