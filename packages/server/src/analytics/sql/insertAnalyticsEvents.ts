import { type Queryable, toStored } from '@imagegen/db';

export interface AnalyticsEventRow {
  type: 'page_view';
  path: string;
  referrer: string | null;
  origin: string | null;
  userAgent: string | null;
  occurredAt: Date;
}

/** Stores a batch of events in one statement (arrays unnested server-side), any string as it came. */
export async function insertAnalyticsEvents(db: Queryable, batch: AnalyticsEventRow[]): Promise<number> {
  if (batch.length === 0) return 0;
  const events = toStored(batch);
  const result = await db.query({
    name: 'insertAnalyticsEvents',
    text: `INSERT INTO analytics_events (type, path, referrer, origin, user_agent, occurred_at)
           SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[])`,
    values: [
      events.map((e) => e.type),
      events.map((e) => e.path),
      events.map((e) => e.referrer),
      events.map((e) => e.origin),
      events.map((e) => e.userAgent),
      events.map((e) => e.occurredAt.toISOString()),
    ],
  });
  return result.rowCount ?? 0;
}
