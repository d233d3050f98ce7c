import type { ValidateFunction } from 'ajv';
import type { ValidationErrorEntry } from './endpoint.ts';
import { MAX_DETAIL_ENTRIES, pydanticEntries } from './pydantic-errors.ts';

/**
 * A body with a list of thousands of items is checked without making an error per item: the
 * answer lists at most MAX_DETAIL_ENTRIES entries, so only the start of each long list can show
 * in it. A body built to fail 100,000 times then costs about what one with a thousand failures
 * costs, and its answer is the same, entry for entry, as checking every item would give.
 *
 * A list is long past twice the entries an answer lists: no client of the original sends one.
 */
export const LONG_LIST_ITEMS = 2 * MAX_DETAIL_ENTRIES;

/**
 * The known fields of a body whose value is a list of more than `longList` items, in the order of
 * `fields`. The body's own members are looked at, a few where the schema has dozens of fields.
 */
export function longListFields(
  body: Record<string, unknown>,
  fields: readonly string[],
  longList = LONG_LIST_ITEMS,
): string[] {
  const long = Object.keys(body).filter((name) => {
    const value = body[name];
    return Array.isArray(value) && value.length > longList;
  });
  return long.length === 0 ? long : fields.filter((field) => long.includes(field));
}

/**
 * The detail list of an invalid body with long lists. The body is checked with each long list cut
 * to its first items: entries sort by field and then by item, so the items past the cut can only
 * show when the fields before the list and the items before the cut answer fewer entries than an
 * answer holds. Where they do, the cut moves four times further and the check runs again; it
 * never moves past the end of a list. A cut is always past the field's own length bound, so a
 * list too long for its field stays too long (and its length error hides its items' errors).
 */
export function detailWithLongLists(
  body: Record<string, unknown>,
  longFields: readonly string[],
  validate: ValidateFunction,
  fieldOrder: readonly string[],
  maxItems: (field: string) => number | undefined,
): ValidationErrorEntry[] {
  const cuts = new Map(
    longFields.map((field) => [field, Math.max(MAX_DETAIL_ENTRIES + 1, (maxItems(field) ?? 0) + 1)]),
  );
  for (;;) {
    const trial: Record<string, unknown> = { ...body };
    for (const [field, cut] of cuts) trial[field] = (body[field] as unknown[]).slice(0, cut);
    validate(trial);
    const entries = pydanticEntries(validate.errors ?? [], fieldOrder);
    let moved = false;
    for (const [field, cut] of cuts) {
      if ((body[field] as unknown[]).length <= cut) continue;
      // Too long for its field: its one length error hides every item, cut or not.
      if (cut > (maxItems(field) ?? Number.POSITIVE_INFINITY)) continue;
      const rank = fieldOrder.indexOf(field);
      let shown = 0;
      for (const { field: entryRank } of entries) if (entryRank <= rank) shown++;
      if (shown < MAX_DETAIL_ENTRIES) {
        cuts.set(field, cut * 4);
        moved = true;
      }
    }
    if (!moved) return entries.slice(0, MAX_DETAIL_ENTRIES).map(({ entry }) => entry);
  }
}
