import Type, {
  type Static,
  type TArray,
  type TInteger,
  type TNumber,
  type TObject,
  type TSchema,
  type TUnion,
} from 'typebox';

/**
 * Building blocks every request schema shares. Bounds are written the way the API reference's
 * bounds table words them: `gt` for "above", `ge` for "from", `lt` for "below", `le` for "at
 * most", so a reader can hold a schema next to that table (test/spec-tables.ts transcribes it).
 */

export interface Bounds {
  gt?: number;
  ge?: number;
  lt?: number;
  le?: number;
}

interface NumericOptions extends Bounds {
  default?: number;
  description?: string;
}

/** Only in types: the key under which a number schema's type keeps its bounds. */
declare const BOUNDS: unique symbol;

/**
 * What the type of a number schema keeps of its options: its kind and its bounds, as literal
 * types, e.g. `{ kind: 'integer'; gt: 0; le: 4 }`. The SDK reads them (`FieldBounds`) to refuse, at
 * compile time, a literal the API would refuse. The schema object itself never has this property:
 * the JSON Schema, the validators and /openapi.json are what they were.
 */
type KeptBounds<Kind extends 'integer' | 'number', O> = {
  readonly [K in 'kind' | (keyof Bounds & keyof O)]: K extends keyof Bounds ? O[K & keyof O] : Kind;
};

/** The bounds kept in the type of a number schema made by `Int` or `Num`; never for any other schema. */
type BoundsOf<S> = S extends { readonly [BOUNDS]?: infer B } ? (unknown extends B ? never : B) : never;

/**
 * The bounds of each bounded number field of an object schema, by name: `{ samples: { kind:
 * 'integer'; gt: 0; le: 4 } }`; a list of numbers (or null) gives its items' bounds, with `items:
 * true`. The SDK's request types read them.
 */
export type FieldBounds<S> =
  S extends TObject<infer Properties>
    ? {
        [K in keyof Properties as [FieldBound<Properties[K]>] extends [never] ? never : K]: FieldBound<
          Properties[K]
        >;
      }
    : never;

type FieldBound<S> = [BoundsOf<S>] extends [never]
  ? S extends TArray<infer Item>
    ? ListBound<WithBounds<BoundsOf<Item>>>
    : S extends TUnion<infer Members>
      ? FieldBound<Members[number]>
      : never
  : WithBounds<BoundsOf<S>>;

/** `B` when it holds a bound (not only the kind), else never. */
type WithBounds<B> = [keyof B & keyof Bounds] extends [never] ? never : B;

type ListBound<B> = [B] extends [never]
  ? never
  : { readonly [K in keyof B | 'items']: K extends keyof B ? B[K] : true };

function bounds({ gt, ge, lt, le }: Bounds): Record<string, number> {
  const out: Record<string, number> = {};
  if (gt !== undefined) out.exclusiveMinimum = gt;
  if (ge !== undefined) out.minimum = ge;
  if (lt !== undefined) out.exclusiveMaximum = lt;
  if (le !== undefined) out.maximum = le;
  return out;
}

function numericSchema(kind: 'integer' | 'number', options: NumericOptions): TSchema {
  const { default: dflt, description, ...rest } = options;
  const extra: Record<string, unknown> = { ...bounds(rest) };
  if (dflt !== undefined) extra.default = dflt;
  if (description !== undefined) extra.description = description;
  return kind === 'integer' ? Type.Integer(extra) : Type.Number(extra);
}

/**
 * An integer field; with a default it is optional (pydantic fills it). Its bounds stay literal in
 * its type (`const`), so write them as literals here, not as values of type `number`.
 */
export function Int<const O extends NumericOptions = Record<never, never>>(options: O = {} as O) {
  return numericSchema('integer', options) as TInteger & { readonly [BOUNDS]?: KeptBounds<'integer', O> };
}

/** A float field; its bounds stay literal in its type, as `Int`'s do. */
export function Num<const O extends NumericOptions = Record<never, never>>(options: O = {} as O) {
  return numericSchema('number', options) as TNumber & { readonly [BOUNDS]?: KeptBounds<'number', O> };
}

export function Bool(dflt: boolean | undefined, description?: string) {
  const options: Record<string, unknown> = {};
  if (dflt !== undefined) options.default = dflt;
  if (description !== undefined) options.description = description;
  return Type.Boolean(options);
}

/** A string enumeration; pydantic v1 reports a miss as `type_error.enum` with every member. */
export function Enum<const T extends readonly string[]>(
  values: T,
  options: { default?: T[number]; description?: string } = {},
) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

export function Nullable<T extends TSchema>(
  schema: T,
  options: { default?: unknown; description?: string } = {},
) {
  return Type.Union([schema, Type.Null()], options);
}

export function List<T extends TSchema>(
  items: T,
  options: { maxItems?: number; minItems?: number; default?: unknown[]; description?: string } = {},
) {
  return Type.Array(items, options);
}

/** The Ajv keyword that checks an http(s) URL the way pydantic v1's AnyHttpUrl does. */
export const HTTP_URL_KEYWORD = 'x-http-url';
/** pydantic's HttpUrl limit (the longest URL old browsers took). */
const URL_MAX_LENGTH = 2083;
/** Annotation on ImageUrl: the worker fetches fields carrying it (Endpoint.imageFields). */
export const IMAGE_KEYWORD = 'x-image';

/**
 * The annotation on an optional field, or on a list's items, whose empty string means "not given":
 * the request is read as if the field were left out, or the item not in the list (coercion.ts
 * does it before validation). Forms send `""` for a choice left empty: the original service's
 * frontend sends `style_image: ""` when no background image is chosen, and its palette picker
 * five colours padded with `""`. Never on a required field: its empty value stays refused.
 */
export const EMPTY_IS_ABSENT_KEYWORD = 'x-empty-is-absent';

/** The sentence the docs print after the description of a field that takes `""` as left out. */
export const EMPTY_FIELD_SENTENCE = 'Empty (`""`) is the same as leaving it out.';

/** The sentence the docs print after the description of a list whose `""` items are left out. */
export const EMPTY_ITEMS_SENTENCE = 'Empty entries (`""`) are left out.';

/** A public image URL: http or https only, at most 2083 characters once stripped of whitespace. */
export const ImageUrl = Type.Unsafe<string>({
  type: 'string',
  format: 'uri',
  minLength: 1,
  maxLength: URL_MAX_LENGTH,
  [HTTP_URL_KEYWORD]: true,
  [IMAGE_KEYWORD]: true,
  description: 'Public http(s) URL of an image.',
});

/**
 * The URL of an image a request may do without: `""` (or only spaces, which a URL loses) is the
 * same as leaving it out. Every optional image field is one; a required one is `ImageUrl`.
 */
export const OptionalImageUrl = emptyIsAbsent(ImageUrl);

/** An http(s) URL that is not an image (webhook, model file). */
export const HttpUrl = Type.Unsafe<string>({
  type: 'string',
  format: 'uri',
  minLength: 1,
  maxLength: URL_MAX_LENGTH,
  [HTTP_URL_KEYWORD]: true,
});

/**
 * `schema`, with an empty string read as left out (EMPTY_IS_ABSENT_KEYWORD): on an optional
 * field, and on the items of a list whose items stand alone (a `""` item of a list that pairs
 * with another by position would shift the pairs, so those keep refusing it). The description
 * says so, for the docs.
 */
export function emptyIsAbsent<T extends TSchema>(schema: T, description?: string): T {
  const said = description ?? (schema as { description?: string }).description;
  return Type.Unsafe<Static<T>>({
    ...schema,
    [EMPTY_IS_ABSENT_KEYWORD]: true,
    description: said === undefined ? EMPTY_FIELD_SENTENCE : `${said} ${EMPTY_FIELD_SENTENCE}`,
  }) as unknown as T;
}

/** A list of `item` whose empty-string items are left out, as a form pads unused slots. */
export function ListSkippingEmpty<T extends TSchema>(
  item: T,
  options: { maxItems?: number; description?: string } = {},
) {
  const { description, ...rest } = options;
  const items = Type.Unsafe<Static<T>>({ ...item, [EMPTY_IS_ABSENT_KEYWORD]: true }) as unknown as T;
  return Type.Array(items, {
    ...rest,
    description: description === undefined ? EMPTY_ITEMS_SENTENCE : `${description} ${EMPTY_ITEMS_SENTENCE}`,
  });
}

export function ImageUrlList(description?: string) {
  return Type.Array(ImageUrl, description === undefined ? {} : { description });
}

const SCHEDULERS = [
  'EulerDiscreteScheduler',
  'DDIMScheduler',
  'DDPMScheduler',
  'HeunDiscreteScheduler',
  'UniPCMultistepScheduler',
  'DPMSolverMultistepScheduler',
  'DEISMultistepScheduler',
  'PNDMScheduler',
  'EulerAncestralDiscreteScheduler',
  'KDPM2DiscreteScheduler',
  'LCMScheduler',
  'DPMSolverMultistepSchedulerSDE',
] as const;

/**
 * The API reference gives two readings of the scheduler default. We take the one that names the
 * endpoint: EulerDiscreteScheduler for text2image and Photomaker, UniPCMultistepScheduler for
 * image2image and every other schema with a scheduler.
 */
export function Scheduler(dflt: 'EulerDiscreteScheduler' | 'UniPCMultistepScheduler') {
  const reading =
    dflt === 'EulerDiscreteScheduler'
      ? 'the original API names EulerDiscreteScheduler for text2image and Photomaker'
      : 'the original API names UniPCMultistepScheduler for image2image; we use it wherever text2image and Photomaker are not meant';
  return Enum(SCHEDULERS, {
    default: dflt,
    description: `Sampler. Default ${dflt}: the original API gives two readings of the scheduler default; ${reading}.`,
  });
}

/**
 * A hash that names a model the owner uploaded or trained (`{hash}` in the API reference). Lower-case
 * hex, 8 to 64 characters, so it can never be confused with a named member of an enumeration.
 */
const MODEL_HASH_PATTERN = '^[0-9a-f]{8,64}$';
export const ModelHash = Type.String({
  pattern: MODEL_HASH_PATTERN,
  description: 'Hash of an uploaded model.',
});

/** Hex colour, `#RGB` or `#RRGGBB`. */
export const HEX_COLOUR_PATTERN = '^#(?:[0-9a-fA-F]{3}){1,2}$';

/** The moments of a task a webhook can be called at (`webhook_events_filter`). */
export const WEBHOOK_EVENTS = ['start', 'progress', 'completed'] as const;

/** Fields "most generation requests" carry, in the API reference's words. `base64` is added per schema. */
export const CommonFields = {
  webhook: Type.Optional(emptyIsAbsent(HttpUrl, 'URL that receives a signed POST when the task ends.')),
  // An extension. It has no `default` keyword on purpose: validation would write it into every
  // stored request, and a client that never sends it must see its tasks exactly as before.
  webhook_events_filter: Type.Optional(
    List(Enum(WEBHOOK_EVENTS), {
      description:
        'Which events call `webhook`: `start` (a worker started the task), `progress` (at most one ' +
        'every 500 ms while the engine reports progress), `completed` (the task ended). Default ' +
        '`["completed"]`.',
    }),
  ),
  server_id: Type.Optional(
    Type.String({
      description:
        "Enterprise routing: 'any' load-balances over your plan's servers; a specific id routes to that server.",
    }),
  ),
  direct_link: Type.Optional(Bool(false, 'Answer with direct storage links instead of API links.')),
  batch_id: Type.Optional(Type.String({ description: 'Groups tasks; see GET /batches/v1/{batch_id}.' })),
  file_prefix: Type.Optional(Type.String({ description: 'Prefix for output file names.' })),
  queued_image_urls: Type.Optional(
    Bool(false, 'Return output links at once; they resolve once the task succeeds.'),
  ),
  seed: Type.Optional(Int({ default: -1, description: 'Random seed; -1 picks one.' })),
};

/**
 * On every request whose endpoint produces images (not image2prompt, model loading, training,
 * uploads or records): the worker classifies the outputs when it is true.
 */
export const SafetyCheckerField = {
  safety_checker: Type.Optional(
    Bool(
      false,
      'Classify every output image with the NSFW checker before the task succeeds. An unsafe image ' +
        'fails the task with `safety_checker: output image N of M was classified unsafe (...)` and no ' +
        'image is stored.',
    ),
  ),
};

export const Base64Field = {
  base64: Type.Optional(Bool(false, 'Also answer the single output as a base64 PNG in `image`.')),
};

export const Visibility = Enum(['private', 'public'] as const);
export const BaseModel = Enum(['sd1.5', 'sdxl', 'flux'] as const);
