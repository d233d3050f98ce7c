/**
 * The playground's form, read from the contract: which pipelines there are, one field per property
 * of a pipeline's request schema (its control, label, bounds, allowed values, default and
 * description), which fields apply to the body on screen, the body the form sends, and the
 * contract's own validator over that body, so a field shows the message the API would answer.
 */
import {
  compileRequestValidator,
  type DescriptionNotes,
  type Endpoint,
  endpoints,
  withFieldNotes,
} from '@imagegen/contract';
import { type JsonSchema, type ParameterRow, parameterRows } from '../schema-rows.ts';

/** What a field is edited with. */
export type FieldKind =
  | 'text'
  | 'longtext'
  | 'integer'
  | 'number'
  | 'boolean'
  | 'select'
  | 'choices'
  | 'image'
  | 'images'
  | 'list'
  | 'json';

export interface FieldSpec extends ParameterRow {
  kind: FieldKind;
  /** The allowed values of a `select` or `choices` field; suggestions of a `text` field (a named model or a hash). */
  options: string[];
  /** A list's items: read as numbers when they are. */
  numericItems: boolean;
  /** The default, as a value (undefined: none). */
  defaultJson: unknown;
}

export type Body = Record<string, unknown>;

const IMAGE_KEYWORD = 'x-image';
const LONG_TEXT = new Set([
  'prompt',
  'negative_prompt',
  'validation_prompt',
  'instance_prompt',
  'description',
]);

/** The pipelines the playground runs: every path that creates a task, in the contract's order. */
export function pipelines(): Endpoint[] {
  return endpoints.filter((endpoint) => endpoint.status !== undefined && endpoint.request !== undefined);
}

export function pipelineOf(path: string | null | undefined): Endpoint | undefined {
  return pipelines().find((endpoint) => endpoint.path === path);
}

function schemaOf(endpoint: Endpoint): JsonSchema {
  return endpoint.request as unknown as JsonSchema;
}

/** The branches of a union, a `null` branch left out (a nullable field is edited as its type). */
function branches(schema: JsonSchema): JsonSchema[] {
  const list = schema.anyOf ?? schema.oneOf;
  if (!list) return [schema];
  return list.flatMap(branches).filter((branch) => branch.type !== 'null');
}

function isImage(schema: JsonSchema): boolean {
  return (schema as Record<string, unknown>)[IMAGE_KEYWORD] === true;
}

function kindOf(name: string, schema: JsonSchema): Pick<FieldSpec, 'kind' | 'options' | 'numericItems'> {
  const parts = branches(schema);
  const plain = { options: [], numericItems: false };
  if (parts.some(isImage) && parts.some((p) => p.type === 'array')) return { kind: 'images', ...plain };
  if (parts.length === 1 && isImage(parts[0]!)) return { kind: 'image', ...plain };
  if (parts.length > 1) {
    // A named member or a hash (`model_name`): free text with the names as suggestions.
    const named = parts.flatMap((p) => (p.enum ?? []).map(String));
    if (parts.every((p) => p.type === 'string')) return { kind: 'text', ...plain, options: named };
    return { kind: 'json', ...plain };
  }
  const only = parts[0]!;
  if (only.enum) return { kind: 'select', ...plain, options: only.enum.map(String) };
  if (only.type === 'boolean') return { kind: 'boolean', ...plain };
  if (only.type === 'integer') return { kind: 'integer', ...plain };
  if (only.type === 'number') return { kind: 'number', ...plain };
  if (only.type === 'string') return { kind: LONG_TEXT.has(name) ? 'longtext' : 'text', ...plain };
  if (only.type === 'array' && only.items) {
    const items = branches(only.items);
    if (items.some(isImage)) return { kind: 'images', ...plain };
    const named = items.flatMap((p) => (p.enum ?? []).map(String));
    if (items.length === 1 && items[0]!.enum) return { kind: 'choices', ...plain, options: named };
    if (items.every((p) => p.type === 'string')) return { kind: 'list', ...plain, options: named };
    if (items.every((p) => p.type === 'integer' || p.type === 'number')) {
      return { kind: 'list', ...plain, numericItems: true };
    }
  }
  return { kind: 'json', ...plain };
}

function defaultOf(schema: JsonSchema): unknown {
  if (schema.default !== undefined) return schema.default;
  return branches(schema).find((branch) => branch.default !== undefined)?.default;
}

/**
 * One field per property of the pipeline's request schema, in the schema's order; `notes` (the
 * engine catalogue's) after the descriptions of the fields they name, as the API reference has them.
 */
export function fieldsOf(endpoint: Endpoint, notes: DescriptionNotes = {}): FieldSpec[] {
  const schema = withFieldNotes(schemaOf(endpoint), notes);
  const properties = schema.properties ?? {};
  return parameterRows(schema).map((row) => {
    const property = properties[row.name]!;
    return { ...row, ...kindOf(row.name, property), defaultJson: defaultOf(property) };
  });
}

/**
 * Fields that only mean something next to another field (the weights of the listed LoRAs, the
 * images and scales of the chosen IP-Adapters, the images and step ranges of the chosen
 * ControlNets): shown once that field has a value, its own or its default. The contract names
 * the pairs by their shared prefix; a docs test checks that every schema with a refining field
 * also has the field it refines.
 */
export const REFINES: Readonly<Record<string, string>> = {
  lora_weights: 'lora_models',
  ip_adapter_image: 'ip_adapter',
  ip_adapter_style_images: 'ip_adapter',
  ip_adapter_mask_images: 'ip_adapter',
  ip_adapter_scale: 'ip_adapter',
  control_image: 'controlnets',
  controlnet_weights: 'controlnets',
  starting_control_steps: 'controlnets',
  ending_control_steps: 'controlnets',
};

interface Conditional {
  if: { properties?: Record<string, JsonSchema>; required?: string[] };
  then: { required?: string[] };
}

/** The schema's `if`/`then` rules: a field that is required (and only then offered) when the body matches. */
function conditionals(endpoint: Endpoint): Conditional[] {
  const all = (schemaOf(endpoint).allOf ?? []) as unknown as Partial<Conditional>[];
  return all.filter((rule): rule is Conditional => rule.if !== undefined && rule.then !== undefined);
}

/** Whether `body` matches an `if` of the contract (presence, a string, a member of an enum). */
function matches(condition: Conditional['if'], body: Body): boolean {
  if (!(condition.required ?? []).every((name) => body[name] !== undefined && body[name] !== null))
    return false;
  return Object.entries(condition.properties ?? {}).every(([name, rule]) => {
    const value = body[name];
    if (value === undefined) return true;
    if (rule.type === 'string' && typeof value !== 'string') return false;
    if (rule.enum && !rule.enum.includes(value)) return false;
    return true;
  });
}

function hasValue(value: unknown): boolean {
  if (value === undefined || value === null || value === '') return false;
  return !Array.isArray(value) || value.length > 0;
}

/**
 * Whether a field applies to the body on screen: a field the schema's `if`/`then` requires only
 * under a condition (LoadModelPrompt's `model_extension` with `model_url`, `revision` for
 * checkpoint and controlnet models) applies when that condition holds; a refining field
 * (REFINES) when the field it refines has a value. Every other field always applies.
 */
export function applies(
  endpoint: Endpoint,
  field: FieldSpec,
  body: Body,
  fields: readonly FieldSpec[],
): boolean {
  const rules = conditionals(endpoint).filter((rule) => rule.then.required?.includes(field.name));
  if (rules.length > 0) return rules.some((rule) => matches(rule.if, body));
  const refined = REFINES[field.name];
  if (refined === undefined) return true;
  const parent = fields.find((f) => f.name === refined);
  return parent !== undefined && (hasValue(body[refined]) || hasValue(parent.defaultJson));
}

/** Whether a field must be given: required by the schema, or by an `if`/`then` rule that holds. */
export function isRequired(endpoint: Endpoint, field: FieldSpec, body: Body): boolean {
  if (field.required) return true;
  return conditionals(endpoint).some(
    (rule) => rule.then.required?.includes(field.name) && matches(rule.if, body),
  );
}

/** The body the form sends: the values given to the fields that apply, nothing else. */
export function bodyOf(endpoint: Endpoint, fields: readonly FieldSpec[], values: Body): Body {
  const body: Body = {};
  for (const field of fields) {
    const value = values[field.name];
    if (value === undefined) continue;
    body[field.name] = value;
  }
  // Dropped in a second pass: whether a field applies depends on the others' values.
  for (const field of fields) {
    if (!applies(endpoint, field, body, fields)) delete body[field.name];
  }
  return body;
}

/** The API's 422 messages for this body, by field (`body` for the body as a whole): `ensure this value is...`. */
export function problemsOf(endpoint: Endpoint, body: Body): Record<string, string[]> {
  // The validator fills defaults into what it is given: it gets a copy.
  const result = compileRequestValidator(endpoint)(structuredClone(body));
  const problems: Record<string, string[]> = {};
  if (result.ok) return problems;
  for (const entry of result.detail) {
    const field = String(entry.loc[1] ?? 'body');
    const where = entry.loc.length > 2 ? `${entry.loc.slice(2).join('.')}: ` : '';
    problems[field] ??= [];
    problems[field].push(`${where}${entry.msg}`);
  }
  return problems;
}

/** The text a field's input shows for a value. */
export function shownText(field: FieldSpec, value: unknown): string {
  if (value === undefined || value === null) return '';
  if (field.kind === 'images' && Array.isArray(value)) return value.join('\n');
  if (field.kind === 'list' && Array.isArray(value)) return value.join(', ');
  if (field.kind === 'json') return JSON.stringify(value);
  return String(value);
}

const NUMBER = /^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/;

/**
 * The value of a field typed as text. Numbers become numbers; text that is not one stays text,
 * which the validator then refuses with the API's own words (`value is not a valid integer`).
 * An empty optional field is left out; an empty required text field is the empty string.
 */
export function typedValue(field: FieldSpec, text: string): unknown {
  if (text.trim() === '')
    return field.required && (field.kind === 'text' || field.kind === 'longtext') ? '' : undefined;
  switch (field.kind) {
    case 'integer':
    case 'number':
      return NUMBER.test(text) ? Number(text) : text;
    case 'images':
      return text
        .split(/\s+/)
        .map((line) => line.trim())
        .filter(Boolean);
    case 'list': {
      const items = text
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean);
      return field.numericItems ? items.map((item) => (NUMBER.test(item) ? Number(item) : item)) : items;
    }
    case 'json':
      try {
        return JSON.parse(text);
      } catch {
        return text;
      }
    default:
      return text;
  }
}
