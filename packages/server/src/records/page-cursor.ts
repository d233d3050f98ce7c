import { isUuid } from '@imagegen/db';

/**
 * The cursor of a listing read newest first by (created_at, id) (tasks, webhook deliveries): where
 * the previous page stopped, opaque to clients, so rows added meanwhile neither repeat nor shift a
 * page.
 */
export function writeCursor(createdUs: string, id: string): string {
  return Buffer.from(`${createdUs}.${id}`).toString('base64url');
}

/** A cursor that no page of the listing handed out. */
export class InvalidCursorError extends Error {
  override readonly name = 'InvalidCursorError';
}

export function readCursor(cursor: string): { createdUs: string; id: string } {
  const [createdUs, id] = Buffer.from(cursor, 'base64url').toString('utf8').split('.');
  if (!createdUs || !/^-?\d{1,19}$/.test(createdUs) || !id || !isUuid(id)) {
    throw new InvalidCursorError('not a cursor of this listing: pass the next_cursor of a previous page');
  }
  return { createdUs, id };
}
