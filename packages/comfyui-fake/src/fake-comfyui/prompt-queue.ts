import type { ApiPrompt } from '@imagegen/engine-comfyui/engine';

/**
 * ComfyUI's PromptQueue (execution.py) in the fake: pending prompts by priority number, the one
 * running, and the history of ended prompts (in memory: a restart loses it). Every change calls
 * `changed`, where the server broadcasts `status`.
 */

export interface QueueItem {
  readonly number: number;
  readonly promptId: string;
  readonly prompt: ApiPrompt;
  readonly extraData: Readonly<Record<string, unknown>>;
  readonly outputs: readonly string[];
}

export interface HistoryEntry {
  readonly prompt: readonly unknown[];
  readonly outputs: Readonly<Record<string, unknown>>;
  readonly status: {
    readonly status_str: 'success' | 'error';
    readonly completed: boolean;
    readonly messages: readonly (readonly [string, unknown])[];
  };
  readonly meta: Readonly<Record<string, unknown>>;
}

/** ComfyUI keeps this many history entries. */
const MAXIMUM_HISTORY_SIZE = 10_000;

/** The queue item as `/queue` and history show it: `[number, id, graph, extra_data, outputs]`. */
export const wireItem = (item: QueueItem) => [
  item.number,
  item.promptId,
  item.prompt,
  item.extraData,
  item.outputs,
];

export class PromptQueue {
  private pending: { item: QueueItem; seq: number }[] = [];
  private seq = 0;
  running: QueueItem | undefined;
  private readonly history = new Map<string, HistoryEntry>();
  /** The most prompts it held at once (running plus pending). */
  maxLength = 0;

  constructor(private readonly changed: () => void) {}

  get remaining(): number {
    return this.pending.length + (this.running ? 1 : 0);
  }

  put(item: QueueItem): void {
    const entry = { item, seq: this.seq++ };
    // Lowest number first; equal numbers in arrival order (a heap of (number, id) tuples in Python
    // breaks ties by id, which nobody relies on).
    const at = this.pending.findIndex((other) => other.item.number > item.number);
    if (at < 0) this.pending.push(entry);
    else this.pending.splice(at, 0, entry);
    this.maxLength = Math.max(this.maxLength, this.remaining);
    this.changed();
  }

  /** Takes the next prompt to run. */
  take(): QueueItem | undefined {
    const next = this.pending.shift();
    if (!next) return undefined;
    this.running = next.item;
    this.changed();
    return next.item;
  }

  /** Writes the running prompt's history entry and clears it (task_done). */
  done(entry: HistoryEntry): void {
    const running = this.running;
    if (!running) return;
    if (this.history.size > MAXIMUM_HISTORY_SIZE) this.history.delete(this.history.keys().next().value!);
    this.history.set(running.promptId, entry);
    this.running = undefined;
    this.changed();
  }

  /** Removes a pending prompt; ComfyUI reports an emptied queue twice (wipe, then delete). */
  delete(promptId: string): boolean {
    const at = this.pending.findIndex((entry) => entry.item.promptId === promptId);
    if (at < 0) return false;
    if (this.pending.length === 1) this.wipe();
    else this.pending.splice(at, 1);
    this.changed();
    return true;
  }

  wipe(): void {
    this.pending = [];
    this.changed();
  }

  /** `GET /queue`. */
  snapshot() {
    return {
      queue_running: this.running ? [wireItem(this.running)] : [],
      queue_pending: this.pending.map((entry) => wireItem(entry.item)),
    };
  }

  entry(promptId: string): HistoryEntry | undefined {
    return this.history.get(promptId);
  }

  /** `GET /history?max_items=&offset=` (a negative offset counts max_items back from the end). */
  entries(maxItems: number | undefined, offset: number): Record<string, HistoryEntry> {
    const all = [...this.history.entries()];
    const from = offset < 0 && maxItems !== undefined ? all.length - maxItems : offset;
    const end = maxItems === undefined ? undefined : Math.max(0, from) + maxItems;
    return Object.fromEntries(all.slice(Math.max(0, from), end));
  }

  deleteHistory(promptId: string): void {
    this.history.delete(promptId);
  }

  /** A restart: queue and history are gone. */
  forget(): void {
    this.pending = [];
    this.running = undefined;
    this.history.clear();
  }

  clearHistory(): void {
    this.history.clear();
  }
}
