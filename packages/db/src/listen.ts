import type { Pool, PoolClient } from './pool.ts';

export interface Listener {
  /** UNLISTENs and gives the connection back to the pool. */
  close(): Promise<void>;
}

/**
 * Holds one connection of the pool on `LISTEN channel` and calls `onEvent` with each notification's
 * payload. A dropped connection is replaced; `onEvent(null)` is called whenever listening (re)starts,
 * since notifications sent while nobody listened are lost: the caller re-reads what it watches.
 * Resolves once the first attempt to listen has been made (a failed one retries in the background).
 */
export async function listen(
  pool: Pool,
  channel: string,
  onEvent: (payload: string | null) => void,
  log: (line: string) => void,
): Promise<Listener> {
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
      log(`LISTEN ${channel} failed: ${(error as Error).message}`);
      if (!closed) retry = setTimeout(() => void connect(), 1_000);
      return;
    }
    let released = false;
    const onNotification = (message: { payload?: string }) => onEvent(message.payload ?? '');
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
      log(`LISTEN ${channel}: connection lost: ${error.message}`);
      drop(error);
      if (!closed) retry = setTimeout(() => void connect(), 500);
    };
    client.on('notification', onNotification);
    client.on('error', onError);
    try {
      await client.query(`LISTEN ${channel}`);
    } catch (error) {
      onError(error as Error);
      return;
    }
    if (closed) {
      drop();
      return;
    }
    current = { client, drop };
    onEvent(null);
  };
  await connect();
  return {
    close: async () => {
      closed = true;
      clearTimeout(retry);
      const listening = current;
      if (listening) {
        const failed = await listening.client.query(`UNLISTEN ${channel}`).then(
          () => undefined,
          (error: Error) => error,
        );
        listening.drop(failed);
      }
    },
  };
}
