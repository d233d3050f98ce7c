import { type ImageSize, parseSize } from './image-sizes.ts';
import { QUALITIES } from './model-table.ts';
import { invalidRequest, OpenAiError } from './openai-errors.ts';

/**
 * The fields of an OpenAI Images API request, read as OpenAI reads them: a generation's JSON body,
 * or an edit's form (whose values are all text). Fields this server has no use for (`user`,
 * `style`, `moderation`, `input_fidelity`, and any it does not know) are accepted and left aside,
 * so a client written for OpenAI's parameters is never refused for one of them; a value it cannot
 * honour (`stream: true`, a transparent background) is refused by name.
 */

export type ResponseFormat = 'url' | 'b64_json';
export type OutputFormat = 'png' | 'jpeg' | 'webp';
export type Quality = (typeof QUALITIES)[number];

export interface ImageRequest {
  readonly prompt: string;
  /** As sent; undefined: the table's default. */
  readonly model: string | undefined;
  readonly n: number;
  readonly size: ImageSize | 'auto';
  readonly quality: Quality;
  /** As sent; undefined: the model name's default (b64_json for GPT image names, else url). */
  readonly responseFormat: ResponseFormat | undefined;
  /** As sent; undefined: the pipeline's own format (PNG). */
  readonly outputFormat: OutputFormat | undefined;
  /** 0 to 100, for JPEG and WebP (default 100, as OpenAI's). */
  readonly outputCompression: number;
  readonly background: 'auto' | 'opaque';
}

/** OpenAI's longest prompt (GPT image models). */
export const MAX_PROMPT_LENGTH = 32_000;
/** OpenAI's most images per request; a model may draw fewer (its pipeline's `samples`). */
export const MAX_N = 10;

const RESPONSE_FORMATS = ['url', 'b64_json'] as const;
const OUTPUT_FORMATS = ['png', 'jpeg', 'webp'] as const;

/** `'a', 'b' and 'c'`, as OpenAI lists supported values. */
export function listed(values: readonly string[]): string {
  const quoted = values.map((value) => `'${value}'`);
  return quoted.length < 2 ? quoted.join('') : `${quoted.slice(0, -1).join(', ')} and ${quoted.at(-1)}`;
}

/** `fields`: a JSON object, or a form's text fields (`form`: numbers and booleans arrive as text). */
export function readImageRequest(fields: Readonly<Record<string, unknown>>, form: boolean): ImageRequest {
  const field = (name: string) => (fields[name] === null ? undefined : fields[name]);
  const text = (name: string): string | undefined => {
    const value = field(name);
    if (value === undefined || typeof value === 'string') return value;
    throw invalidRequest(
      `Invalid type for '${name}': expected a string, but got ${typeName(value)} instead.`,
      name,
      'invalid_type',
    );
  };
  const oneOf = <T extends string>(name: string, values: readonly T[]): T | undefined => {
    const value = text(name);
    if (value === undefined || (values as readonly string[]).includes(value)) return value as T | undefined;
    throw invalidRequest(`Invalid value: '${value}'. Supported values are: ${listed(values)}.`, name);
  };
  const integer = (name: string, min: number, max: number, fallback: number): number => {
    const value = field(name);
    if (value === undefined) return fallback;
    const n = form && typeof value === 'string' && /^\s*-?\d{1,9}\s*$/.test(value) ? Number(value) : value;
    if (typeof n !== 'number' || !Number.isInteger(n)) {
      throw invalidRequest(
        `Invalid type for '${name}': expected an integer, but got ${typeName(value)} instead.`,
        name,
        'invalid_type',
      );
    }
    if (n < min) {
      throw invalidRequest(
        `Invalid '${name}': integer below minimum value. Expected a value >= ${min}, but got ${n} instead.`,
        name,
        'integer_below_min_value',
      );
    }
    if (n > max) {
      throw invalidRequest(
        `Invalid '${name}': integer above maximum value. Expected a value <= ${max}, but got ${n} instead.`,
        name,
        'integer_above_max_value',
      );
    }
    return n;
  };

  const prompt = text('prompt');
  if (prompt === undefined) {
    throw invalidRequest("Missing required parameter: 'prompt'.", 'prompt', 'missing_required_parameter');
  }
  if (prompt.trim() === '') {
    throw invalidRequest(
      "Invalid 'prompt': empty string. Expected a string with minimum length 1, but got an empty string instead.",
      'prompt',
      'empty_string',
    );
  }
  if (prompt.length > MAX_PROMPT_LENGTH) {
    throw invalidRequest(
      `Invalid 'prompt': string too long. Expected a string with maximum length ${MAX_PROMPT_LENGTH}, but got a string with length ${prompt.length} instead.`,
      'prompt',
      'string_above_max_length',
    );
  }
  const sizeText = text('size');
  const size = sizeText === undefined || sizeText === 'auto' ? 'auto' : parseSize(sizeText);
  if (size === null) {
    throw invalidRequest(
      `Invalid value: '${sizeText}'. Supported values are 'auto' and WIDTHxHEIGHT, such as '1024x1024' or '1536x1024'.`,
      'size',
    );
  }
  const stream = field('stream');
  if (stream === true || (form && typeof stream === 'string' && stream.trim().toLowerCase() === 'true')) {
    throw invalidRequest(
      'Streaming is not supported by this server: leave `stream` out, or send false.',
      'stream',
      'unsupported_value',
    );
  }
  const background = oneOf('background', ['auto', 'opaque', 'transparent']) ?? 'auto';
  if (background === 'transparent') {
    throw invalidRequest(
      "Transparent backgrounds are not drawn by this server's pipelines: send 'auto' or 'opaque'.",
      'background',
      'unsupported_value',
    );
  }
  return {
    prompt,
    model: text('model'),
    n: integer('n', 1, MAX_N, 1),
    size,
    quality: oneOf('quality', QUALITIES) ?? 'auto',
    responseFormat: oneOf('response_format', RESPONSE_FORMATS),
    outputFormat: oneOf('output_format', OUTPUT_FORMATS),
    outputCompression: integer('output_compression', 0, 100, 100),
    background,
  };
}

function typeName(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'number') return Number.isInteger(value) ? 'an integer' : 'a decimal';
  if (typeof value === 'boolean') return 'a boolean';
  return `a ${typeof value}`;
}

/** A JSON body as an object of fields; anything else is refused as OpenAI refuses it. */
export function jsonFields(bytes: Buffer): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new OpenAiError(
      400,
      'We could not parse the JSON body of your request: send a JSON object with Content-Type: application/json.',
      'invalid_request_error',
    );
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidRequest(
      `Invalid type for body: expected an object, but got ${typeName(value)} instead.`,
      null,
      'invalid_type',
    );
  }
  return value as Record<string, unknown>;
}
