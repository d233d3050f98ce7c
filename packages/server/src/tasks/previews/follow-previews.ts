import type { Pool } from '@imagegen/db';
import { oneReadAtATime } from '../one-read-at-a-time.ts';
import { taskEvents } from '../task-events.ts';
import { getTaskPreview, type TaskPreview } from './sql/getTaskPreview.ts';

/**
 * Hands `show` the newest preview of a task (its owner already checked): the one stored now, then
 * each new one announced, read once however many were announced while a read ran. Resolves once
 * following, with the function that stops it. A stream costs the database nothing while no
 * preview comes.
 */
export async function followPreviews(
  pool: Pool,
  taskId: string,
  show: (preview: TaskPreview) => void,
): Promise<() => void> {
  let shown = 0;
  let stopped = false;
  const read = oneReadAtATime(
    async () => {
      const preview = await getTaskPreview(pool, taskId);
      // A row starts again from 1 on another attempt of the task: any other number is news.
      if (preview && preview.seq !== shown && !stopped) {
        shown = preview.seq;
        show(preview);
      }
    },
    () => stopped,
    // A preview missed is no loss: the next one, half a second later, is read again.
    () => {},
  );
  const unsubscribe = await taskEvents(pool).subscribePreviews(taskId, () => void read());
  await read();
  return () => {
    stopped = true;
    unsubscribe();
  };
}
