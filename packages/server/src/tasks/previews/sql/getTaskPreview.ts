import type { Queryable } from '@imagegen/db';

export interface TaskPreview {
  readonly seq: number;
  readonly contentType: string;
  readonly image: Buffer;
}

/** The newest preview of a task (null: none, or it ended). The caller has checked the owner. */
export async function getTaskPreview(db: Queryable, taskId: string): Promise<TaskPreview | null> {
  const result = await db.query<{ seq: number; content_type: string; image: Buffer }>({
    name: 'getTaskPreview',
    text: 'SELECT seq, content_type, image FROM task_previews WHERE task_id = $1',
    values: [taskId],
  });
  const row = result.rows[0];
  return row ? { seq: row.seq, contentType: row.content_type, image: row.image } : null;
}
