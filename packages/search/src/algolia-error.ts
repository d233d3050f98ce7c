/**
 * A request the search service refuses, answered in Algolia's error shape:
 * `{"message": "...", "status": n}` with that HTTP status. Anything else thrown while answering is
 * a 500 with a generic message.
 */
export class AlgoliaError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}
