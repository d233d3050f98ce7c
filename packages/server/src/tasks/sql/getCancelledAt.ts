import type { Queryable } from '@imagegen/db';

/** When the task's caller cancelled it (null: not cancelled, or no such task). */
export async function getCancelledAt(db: Queryable, id: string): Promise<Date | null> {
  const result = await db.query<{ cancelled_at: Date | null }>({
    name: 'getCancelledAt',
    text: 'SELECT cancelled_at FROM tasks WHERE id = $1',
    values: [id],
  });
  return result.rows[0]?.cancelled_at ?? null;
}
