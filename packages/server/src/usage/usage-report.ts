import type { ValidationErrorEntry } from '@imagegen/contract';
import type { Queryable } from '@imagegen/db';
import { listUsage, type UsageRow } from './sql/listUsage.ts';

const DAY_MS = 86_400_000;
/** The longest range one read sums: a year, a leap day included. */
export const MAX_USAGE_DAYS = 366;
/** The range when the query names none: the last 30 days, today included. */
const DEFAULT_DAYS = 30;

export interface UsageReport {
  from: string;
  to: string;
  rows: UsageRow[];
}

/** A query the report refuses, with its 422 detail in pydantic's words. */
export class UsageQueryError extends Error {
  constructor(readonly detail: ValidationErrorEntry[]) {
    super(detail.map((entry) => entry.msg).join('; '));
  }
}

/**
 * An owner's usage from day `from` to day `to` (UTC, `YYYY-MM-DD`, both counted), by day and
 * pipeline. `now` is the clock the default range is read from.
 */
export async function usageReport(
  db: Queryable,
  params: { ownerId: string; from?: string; to?: string; now?: Date },
): Promise<UsageReport> {
  const today = Math.floor((params.now ?? new Date()).getTime() / DAY_MS) * DAY_MS;
  const to = params.to === undefined ? today : parseDay(params.to, 'to');
  const from = params.from === undefined ? to - (DEFAULT_DAYS - 1) * DAY_MS : parseDay(params.from, 'from');
  if (to < from) throw refusal('to', 'must not be before from');
  if ((to - from) / DAY_MS + 1 > MAX_USAGE_DAYS)
    throw refusal('to', `the range may cover at most ${MAX_USAGE_DAYS} days`);
  const rows = await listUsage(db, {
    ownerId: params.ownerId,
    from: new Date(from),
    to: new Date(to + DAY_MS),
  });
  return { from: dayOf(from), to: dayOf(to), rows };
}

/** Midnight UTC of a `YYYY-MM-DD` day, as pydantic's `date` reads it (no other form). */
function parseDay(text: string, field: 'from' | 'to'): number {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!match)
    throw new UsageQueryError([
      { loc: ['query', field], msg: 'invalid date format', type: 'value_error.date' },
    ]);
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const time = Date.UTC(year, month - 1, day);
  if (dayOf(time) !== text)
    throw new UsageQueryError([
      { loc: ['query', field], msg: 'invalid date format', type: 'value_error.date' },
    ]);
  return time;
}

function refusal(field: string, msg: string): UsageQueryError {
  return new UsageQueryError([{ loc: ['query', field], msg, type: 'value_error' }]);
}

function dayOf(time: number): string {
  return new Date(time).toISOString().slice(0, 10);
}
