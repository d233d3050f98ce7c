import type { FastifyRequest } from 'fastify';
import { contentTypeOf } from '../http/request-bodies.ts';
import { formKind } from '../http/routes/upload-form.ts';
import { invalidRequest } from './openai-errors.ts';

/**
 * The form of `POST /v1/images/edits`, as OpenAI's clients send it: the image as a file part
 * `image` (or several, each `image[]`, as OpenAI's SDKs and Open WebUI name a list), an optional
 * `mask` file, and the other fields as text parts. Other files are read and left aside.
 */
export interface EditForm {
  readonly fields: Readonly<Record<string, string>>;
  readonly images: readonly Buffer[];
  readonly mask: Buffer | undefined;
}

const IMAGE_PARTS = new Set(['image', 'image[]']);

export async function readEditForm(request: FastifyRequest): Promise<EditForm> {
  if (formKind(contentTypeOf(request)) !== 'multipart' || !request.isMultipart()) {
    throw invalidRequest(
      'Send an edit as multipart/form-data: the image as a file part named image, the other fields as text parts.',
      null,
      'invalid_content_type',
    );
  }
  const fields: Record<string, string> = {};
  const images: Buffer[] = [];
  let mask: Buffer | undefined;
  for await (const part of request.parts()) {
    if (part.type === 'file') {
      const data = await part.toBuffer(); // every file part is drained, used or not
      if (IMAGE_PARTS.has(part.fieldname)) images.push(data);
      else if (part.fieldname === 'mask') {
        if (mask) throw invalidRequest('Send at most one mask.', 'mask');
        mask = data;
      }
    } else if (IMAGE_PARTS.has(part.fieldname) || part.fieldname === 'mask') {
      throw invalidRequest(
        `Invalid type for '${part.fieldname}': expected a file, but got a text field instead.`,
        part.fieldname.replace('[]', ''),
        'invalid_type',
      );
    } else {
      fields[part.fieldname] = String(part.value);
    }
  }
  return { fields, images, mask };
}
