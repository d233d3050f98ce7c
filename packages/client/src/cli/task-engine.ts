import type { ImagegenClient } from '../client.ts';
import type { TaskListEntry, TaskListQuery, TaskPath } from '../types.ts';

/** How many of the newest tasks of the pipeline are searched for the task. */
const SEARCHED = 50;

/**
 * Which engine ran a task, and whether its result is a labelled placeholder, from the task
 * listing: the status body is the original service's and says neither. The task just ended is
 * among the newest of its pipeline; one that 50 newer tasks of the pipeline have pushed off that
 * page answers undefined, and so does an API too old to list tasks.
 */
export async function taskEngine(
  client: ImagegenClient,
  path: TaskPath,
  id: string,
  signal: AbortSignal,
): Promise<Pick<TaskListEntry, 'engine' | 'placeholder'> | undefined> {
  try {
    const query = { pipeline: path, limit: SEARCHED } as TaskListQuery;
    const page = await client.tasks(query, { signal });
    const task = page.tasks.find((each) => each.id === id);
    return task && { engine: task.engine, placeholder: task.placeholder };
  } catch {
    return undefined;
  }
}
