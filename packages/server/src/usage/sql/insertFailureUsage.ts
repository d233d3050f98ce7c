import type { Queryable } from '@imagegen/db';
import type { UsageFacts } from '../usage-facts.ts';
import { usageInsert, usageValues } from './usage-insert.ts';

/** Records the usage of a task that failed for good, inside the transaction that failed it. */
export async function insertFailureUsage(db: Queryable, taskId: string, facts: UsageFacts): Promise<void> {
  await db.query({
    name: 'insertFailureUsage',
    text: usageInsert(`(SELECT * FROM tasks WHERE id = $1 AND state = 'failed')`, 2),
    values: [taskId, ...usageValues(facts)],
  });
}
