import type { Pool, PoolClient } from '../db/pool.ts';
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
 * Holds one connection of the pool on LISTEN and calls `wake` on every notification, so an idle
 * worker claims a new task within a round trip of its commit. A dropped connection is replaced
 * (and `wake` called, since notifications sent meanwhile are lost; the worker's poll is the last
 * resort).
 */
export async function listenForTasks(
  pool: Pool,
  wake: () => void,
  log: (line: string) => void,
): Promise<{ close(): Promise<void> }> {
  let current: { client: PoolClient; drop(error?: Error): void } | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  const connect = async (): Promise<void> => {
    retry = undefined;
    if (closed) return;
    let client: PoolClient;
    try {
      client = await pool.connect();
    } catch (error) {
      log(`listen failed: ${(error as Error).message}`);
      if (!closed) retry = setTimeout(() => void connect(), 1_000);
      return;
    }
    let released = false;
    const onNotification = () => wake();
    const drop = (error?: Error) => {
      if (released) return;
      released = true;
      client.off('notification', onNotification);
      client.off('error', onError);
      // A dropped connection may still report errors; they must not crash the process.
      if (error) client.on('error', () => {});
      client.release(error);
      if (current?.client === client) current = undefined;
    };
    const onError = (error: Error) => {
      log(`listen connection lost: ${error.message}`);
      drop(error);
      if (!closed) retry = setTimeout(() => void connect(), 500);
    };
    client.on('notification', onNotification);
    client.on('error', onError);
    try {
      await client.query(`LISTEN ${TASKS_CHANNEL}`);
    } catch (error) {
      onError(error as Error);
      return;
    }
    current = { client, drop };
    // Anything queued while we were not listening is picked up by the next claim.
    wake();
  };
  await connect();
  return {
    close: async () => {
      closed = true;
      clearTimeout(retry);
      const listening = current;
      if (listening) {
        const failed = await listening.client.query(`UNLISTEN ${TASKS_CHANNEL}`).then(
          () => undefined,
          (error: Error) => error,
        );
        listening.drop(failed);
      }
    },
  };
}
