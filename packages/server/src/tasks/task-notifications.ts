import { type Listener, listen, type Pool } from '@imagegen/db';
import { notifyTasks } from './sql/notifyTasks.ts';

/**
 * Where claimable work is announced: by submitters after their commit (`announceTasks`), and by
 * the tasks table's trigger when a task goes back to the queue (0002_tasks.sql, 0006).
 */
export const TASKS_CHANNEL = 'imagegen_tasks';

/**
 * Wakes the workers after new tasks were committed. One notification covers every commit before
 * it, so a burst of commits sends one: while a NOTIFY is in flight, further calls only ask for one
 * more after it. Does not wait: the caller's tasks are already durable, and a notification that
 * fails (the workers' poll catches the tasks) must not fail a submission.
 */
export function announceTasks(pool: Pool): void {
  let announcer = announcers.get(pool);
  if (!announcer) {
    announcer = new Announcer(pool);
    announcers.set(pool, announcer);
  }
  announcer.announce();
}

const announcers = new WeakMap<Pool, Announcer>();

class Announcer {
  private sending = false;
  private again = false;

  constructor(private readonly pool: Pool) {}

  announce(): void {
    if (this.sending) {
      this.again = true;
      return;
    }
    this.sending = true;
    void this.send();
  }

  private async send(): Promise<void> {
    try {
      do {
        this.again = false;
        await notifyTasks(this.pool);
      } while (this.again);
    } catch {
      // The pool is closing or the database is unreachable: the workers' poll is the last resort.
    } finally {
      this.sending = false;
    }
  }
}

/**
 * Calls `wake` on every announcement, so an idle worker claims a new task within a round trip of
 * its commit; also after a dropped connection is replaced, since notifications sent meanwhile are
 * lost (the worker's poll is the last resort).
 */
export function listenForTasks(pool: Pool, wake: () => void, log: (line: string) => void): Promise<Listener> {
  return listen(pool, TASKS_CHANNEL, () => wake(), log);
}
