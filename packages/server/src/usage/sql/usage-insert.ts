import { toStored } from '@imagegen/db';
import type { UsageFacts } from '../usage-facts.ts';

/**
 * The INSERT of a usage record for the finished task rows of `source` (a relation with the tasks
 * table's columns: a CTE's RETURNING, or a subquery), with the facts as parameters `$first` to
 * `$first + 4`. It is one part of the statement that settles the task (completeTask) or of the
 * transaction that fails it (insertFailureUsage): a record exists exactly when a final state does.
 * A task settles once; ON CONFLICT keeps a repeated write harmless all the same.
 */
export function usageInsert(source: string, first: number): string {
  const p = (n: number) => `$${first + n}`;
  return `INSERT INTO task_usage (task_id, owner_id, pipeline, succeeded, engine, server, model, images,
                                  pixels, queue_seconds, run_seconds, finished_at)
          SELECT s.id, s.owner_id, s.endpoint, s.state = 'succeeded', ${p(0)}::text, ${p(1)}::text,
            ${p(2)}::text, ${p(3)}::integer, ${p(4)}::bigint,
            greatest(0, extract(epoch from coalesce(s.started_at, s.finished_at) - s.created_at))::float8,
            greatest(0, coalesce(extract(epoch from s.finished_at - s.started_at), 0))::float8,
            s.finished_at
          FROM ${source} s
          ON CONFLICT (task_id) DO NOTHING`;
}

/** The values of the facts, in usageInsert's parameter order. */
export function usageValues(facts: UsageFacts): unknown[] {
  // The model may come from the request: its text is stored the way every request string is.
  return [facts.engine, facts.server, toStored(facts.model), facts.images, facts.pixels];
}
