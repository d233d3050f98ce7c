import type { TSchema } from 'typebox';
import { IMAGE_KEYWORD } from './schemas/common.ts';

function holdsImage(schema: unknown): boolean {
  if (typeof schema !== 'object' || schema === null) return false;
  const s = schema as Record<string, unknown>;
  if (s[IMAGE_KEYWORD] === true) return true;
  if (holdsImage(s.items)) return true;
  return Array.isArray(s.anyOf) && s.anyOf.some(holdsImage);
}

/** The top-level fields of a request schema that hold an image URL or a list of them. */
export function imageFieldsOf(schema: TSchema): string[] {
  const properties = (schema as { properties?: Record<string, unknown> }).properties ?? {};
  return Object.entries(properties)
    .filter(([, field]) => holdsImage(field))
    .map(([name]) => name);
}
