import type { Pool, PoolClient } from '../db/pool.ts';

/** Where the tasks table's triggers announce claimable work (see 0002_tasks.sql). */
export const TASKS_CHANNEL = 'imagegen_tasks';

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
