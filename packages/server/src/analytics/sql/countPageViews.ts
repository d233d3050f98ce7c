import { fromStored, type Queryable } from '@imagegen/db';

export interface PageViewCount {
  path: string;
  views: number;
}

/** Page views per path since a time, most viewed first: what the docs team reads. */
export async function countPageViews(db: Queryable, since: Date, limit = 50): Promise<PageViewCount[]> {
  const result = await db.query<{ path: string; views: string }>({
    name: 'countPageViews',
    text: `SELECT path, count(*) AS views FROM analytics_events
           WHERE type = 'page_view' AND occurred_at >= $1
           GROUP BY path ORDER BY count(*) DESC, path LIMIT $2`,
    values: [since.toISOString(), limit],
  });
  return fromStored(result.rows).map((row) => ({ path: row.path, views: Number(row.views) }));
}
