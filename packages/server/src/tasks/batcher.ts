/** One call waiting in a batch, and how to answer it. */
export interface Pending<T, R> {
  readonly item: T;
  resolve(result: R): void;
  reject(error: unknown): void;
}

export interface BatcherOptions<T, R> {
  /** Batches in flight at once. */
  readonly lanes: number;
  /** Items per batch at most. */
  readonly maxBatch: number;
  /**
   * Runs one batch (one statement, one round trip) and answers each of its items. If it throws,
   * every item it has not answered is rejected with that error.
   */
  run(batch: Pending<T, R>[]): Promise<void>;
}

/**
 * Turns concurrent calls into few statements: calls that arrive while the lanes are busy gather,
 * and the next free lane takes them as one batch. Alone, a call goes at once (after the current
 * event-loop turn). Used by the group commit of submissions and the batched status reads, the
 * API's two hottest paths.
 */
export class Batcher<T, R> {
  private waiting: Pending<T, R>[] = [];
  private inFlight = 0;
  /** Lanes waiting for the end of this event-loop turn before they take a batch. */
  private gathering = 0;

  constructor(private readonly options: BatcherOptions<T, R>) {}

  add(item: T): Promise<R> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      if (this.gathering === 0 && this.inFlight < this.options.lanes) void this.lane();
    });
  }

  /**
   * One lane: runs what has gathered, then what gathered meanwhile, until nothing waits. Before
   * taking a batch it lets the current event-loop turn finish, so the calls of every request read
   * in this turn go together instead of the first one going alone (without this, status reads
   * carried 3 ids per statement on average at 64 connections).
   */
  private async lane(): Promise<void> {
    this.inFlight++;
    try {
      for (;;) {
        this.gathering++;
        await endOfTurn();
        this.gathering--;
        if (this.waiting.length === 0) break;
        const batch = this.waiting.splice(0, this.options.maxBatch);
        try {
          await this.options.run(batch);
        } catch (error) {
          for (const pending of batch) pending.reject(error);
        }
      }
    } finally {
      this.inFlight--;
    }
  }
}

function endOfTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
