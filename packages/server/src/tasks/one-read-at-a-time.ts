/**
 * `read`, run one at a time: a call while one runs asks for one more run after it, however many
 * calls came meanwhile, so a burst of announcements costs two reads, the last of them current.
 * `stopped` ends the runs; a failure is handed to `failed` and ends this round.
 */
export function oneReadAtATime(
  read: () => Promise<void>,
  stopped: () => boolean,
  failed: (error: Error) => void,
): () => Promise<void> {
  let reading = false;
  let again = false;
  return async () => {
    if (reading) {
      again = true;
      return;
    }
    reading = true;
    try {
      do {
        again = false;
        await read();
      } while (again && !stopped());
    } catch (error) {
      failed(error as Error);
    } finally {
      reading = false;
    }
  };
}
