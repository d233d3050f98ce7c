import {
  type ApiPrompt,
  PromptFailedError,
  PromptLostError,
  type PromptOutputs,
  type PromptPreview,
  type PromptProgress,
  PromptRejectedError,
  PromptStalledError,
  type PromptTiming,
  ServerOutOfMemoryError,
  ServerRefusedError,
  ServerUnavailableError,
} from '../contracts.ts';
import { type ComfyHttp, parseJson } from './comfy-http.ts';
import type { ComfySocket, SocketEvent } from './comfy-socket.ts';
import { type HistoryEntry, type PromptOutcome, readHistoryEntry } from './history-entry.ts';
import { describeRejection, type RejectionBody } from './rejection.ts';

/**
 * One prompt on one server, from submission to its output files: submitted under our own
 * client_id and prompt_id, followed on the socket, with `/history` (and `/queue`) read when the
 * socket reconnects or stays silent, or when the end it reports does not show every output;
 * cancelled on the server when aborted, and when it runs without progress for the stall bound.
 */

export interface RunTiming {
  /** With no message about the prompt for this long, the client asks `/history` and `/queue`. */
  readonly silenceMs: number;
  /** After this many checks in a row that the server did not answer, it is unavailable. */
  readonly maxFailedChecks: number;
  /**
   * A prompt that runs (not waits in the server's queue) this long with no message about it and no
   * history entry has stalled: it is interrupted and fails with PromptStalledError.
   */
  readonly stallMs: number;
}

export interface RunDeps {
  readonly http: ComfyHttp;
  readonly socket: ComfySocket;
  readonly clientId: string;
  readonly timing: RunTiming;
  /** Prompts given up on that the server could not be told to drop: taken back when it answers again. */
  readonly abandoned: Set<string>;
}

export interface RunOptions {
  readonly promptId: string;
  readonly outputNodes: readonly string[];
  readonly signal: AbortSignal;
  readonly onProgress?: (progress: PromptProgress) => void;
  readonly onNodeStart?: (node: string) => void;
  /** Told each preview frame of this prompt (a server started with `--preview-method`). */
  readonly onPreview?: (preview: PromptPreview) => void;
  /** This prompt's stall bound instead of `RunTiming.stallMs` (Infinity: never stalled). */
  readonly stallMs?: number;
}

export async function runPrompt(
  deps: RunDeps,
  prompt: ApiPrompt,
  options: RunOptions,
): Promise<PromptOutputs> {
  const { signal } = options;
  signal.throwIfAborted();
  // Listen before submitting: the socket drops messages for a client it does not know yet, and a
  // quick prompt can end before the POST's answer arrives.
  const follower = new PromptFollower(deps, options);
  let sent = false;
  try {
    await deps.socket.ready(signal);
    signal.throwIfAborted();
    sent = true;
    const sentAt = Date.now();
    const promptId = await submit(deps, prompt, options);
    return await follower.follow(promptId, sentAt);
  } catch (error) {
    // The server may hold the prompt (an abort, a timeout or a stall while it was sent or ran):
    // take it back, so a wedged prompt does not hold the server's queue.
    if (
      sent &&
      (signal.aborted || error instanceof ServerUnavailableError || error instanceof PromptStalledError) &&
      !(await cancelOnServer(deps.http, follower.promptId))
    ) {
      deps.abandoned.add(follower.promptId);
    }
    if (signal.aborted) throw signal.reason;
    throw error;
  } finally {
    follower.stop();
  }
}

async function submit(deps: RunDeps, prompt: ApiPrompt, options: RunOptions): Promise<string> {
  const { http } = deps;
  const { status, body } = await http.send('POST', '/prompt', {
    json: { prompt, client_id: deps.clientId, prompt_id: options.promptId },
    signal: options.signal,
  });
  if (status === 200) {
    const answer = parseJson<RejectionBody & { prompt_id?: string }>(body, 'POST /prompt', http.server);
    const promptId = answer.prompt_id ?? options.promptId;
    if (Object.keys(answer.node_errors ?? {}).length > 0) {
      // The trap: ComfyUI queued the outputs that validated and dropped the others. A partial
      // result is a wrong result, so take the prompt back and fail.
      await cancelOnServer(http, promptId);
      throw new PromptRejectedError(describeRejection(answer, http.server));
    }
    return promptId;
  }
  if (status === 400) {
    const answer = parseJson<RejectionBody>(body, 'POST /prompt', http.server);
    throw new PromptRejectedError(describeRejection(answer, http.server));
  }
  if (status === 500) {
    // ComfyUI answers 500 when reading or validating the prompt raised: the prompt's fault.
    const text = body.toString('utf8').split('\n').filter(Boolean).join(': ');
    throw new PromptRejectedError(`the prompt could not be read (${text}) on server ${http.server}`);
  }
  throw new ServerUnavailableError(`server ${http.server} answered ${status} to POST /prompt`);
}

/**
 * Removes the prompt if it is still pending, then interrupts it if it runs (in that order, so a
 * prompt that starts in between is still caught). Both touch only this prompt. False when the
 * server did not answer: it may still hold the prompt.
 */
export async function cancelOnServer(
  http: ComfyHttp,
  promptId: string,
  signal?: AbortSignal,
): Promise<boolean> {
  try {
    await http.send('POST', '/queue', { json: { delete: [promptId] }, signal });
    await http.send('POST', '/interrupt', { json: { prompt_id: promptId }, signal });
    return true;
  } catch {
    return false;
  }
}

type NodeOutput = NonNullable<HistoryEntry['outputs']>[string];

interface QueueBody {
  readonly queue_running?: readonly (readonly unknown[])[];
  readonly queue_pending?: readonly (readonly unknown[])[];
}

class PromptFollower {
  promptId: string;
  private following: { resolve(outputs: PromptOutputs): void; reject(error: unknown): void } | undefined;
  private endSeen = false;
  /** `execution_success` was seen: with every output node's `executed` message, the outcome. */
  private succeeded = false;
  /** What each output node showed in its `executed` message: the same as its `/history` output. */
  private readonly shown: Record<string, NodeOutput> = {};
  private timer: NodeJS.Timeout | undefined;
  private checking = false;
  private checkAgain = false;
  private failedChecks = 0;
  /** When the prompt last showed progress (a message about it), or was seen waiting its turn. */
  private movedAt = Date.now();
  private submittedAt = 0;
  /** The server's `execution_start` and `execution_success` stamps, as its messages gave them. */
  private serverStartedAt: number | undefined;
  private serverEndedAt: number | undefined;
  private readonly stopListening: () => void;
  private readonly onAbort = () => this.fail(this.options.signal.reason);

  constructor(
    private readonly deps: RunDeps,
    private readonly options: RunOptions,
  ) {
    this.promptId = options.promptId;
    this.stopListening = deps.socket.listen((event) => this.onSocket(event));
  }

  /** Follows the submitted prompt (the id the server answered) to its output files. */
  follow(promptId: string, submittedAt: number): Promise<PromptOutputs> {
    this.promptId = promptId;
    this.submittedAt = submittedAt;
    this.movedAt = Date.now();
    return new Promise((resolve, reject) => {
      this.following = { resolve, reject };
      this.options.signal.addEventListener('abort', this.onAbort, { once: true });
      if (this.endSeen) void this.check();
      else this.arm();
    });
  }

  /** Stops listening and timing (idempotent); a prompt still followed is left unsettled. */
  stop(): void {
    this.stopListening();
    clearTimeout(this.timer);
    this.options.signal.removeEventListener('abort', this.onAbort);
    this.following = undefined;
  }

  private onSocket(event: SocketEvent): void {
    if (event.kind === 'open' || event.kind === 'close') {
      // Reconnected: messages sent while the socket was down are lost. Dropped: the server may be
      // gone (a refused connection says so at once) or only the socket. Either way, ask it now.
      void this.check();
      return;
    }
    if (event.kind === 'preview') {
      const { promptId, data, contentType } = event.preview;
      if (promptId !== this.promptId) return;
      this.movedAt = Date.now();
      this.arm();
      this.report(() => this.options.onPreview?.({ data, contentType }));
      return;
    }
    if (event.kind !== 'message') return;
    const { type, data } = event.message;
    if (data.prompt_id !== this.promptId) return;
    this.movedAt = Date.now();
    this.arm();
    if (type === 'execution_start') this.serverStartedAt = stamp(data);
    else if (type === 'execution_success') this.serverEndedAt = stamp(data);
    if (type === 'progress') {
      const progress = { node: String(data.node), value: Number(data.value), max: Number(data.max) };
      this.report(() => this.options.onProgress?.(progress));
    } else if (type === 'executing' && data.node !== null && data.node !== undefined) {
      this.report(() => this.options.onNodeStart?.(String(data.node)));
    } else if (type === 'executed') {
      const node = String(data.node);
      if (this.options.outputNodes.includes(node)) this.shown[node] = data.output as NodeOutput;
    } else if (type === 'execution_success') {
      // Every node ran and each output node has said what it saved: `/history` would say the same,
      // so the prompt is settled without asking it (one request fewer on every task).
      this.succeeded = true;
      this.endSeen = true;
      void this.check();
    } else if (
      (type === 'executing' && data.node === null) ||
      type === 'execution_error' ||
      type === 'execution_interrupted'
    ) {
      // The end: `executing {node: null}` comes after history is written, the other two just before.
      this.endSeen = true;
      void this.check();
    }
  }

  /** Tells the caller how the prompt goes; a caller that throws fails the prompt. */
  private report(tell: () => void): void {
    try {
      tell();
    } catch (error) {
      this.fail(error);
    }
  }

  /** Re-arms the silence timer (only while following a submitted prompt). */
  private arm(): void {
    if (!this.following) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.check(), Math.min(this.deps.timing.silenceMs, this.stallMs));
  }

  private async check(): Promise<void> {
    if (!this.following) return;
    if (this.checking) {
      this.checkAgain = true;
      return;
    }
    this.checking = true;
    clearTimeout(this.timer);
    try {
      const shown = this.shownOutcome();
      if (shown) return this.settle(shown);
      do {
        this.checkAgain = false;
        const outcome = await this.lookUp();
        if (outcome === 'waiting') this.movedAt = Date.now();
        else if (outcome !== 'running') return this.settle(outcome);
      } while (this.checkAgain);
      this.failedChecks = 0;
      const still = Date.now() - this.movedAt;
      if (still >= this.stallMs) {
        const seconds = Math.round(still / 1000);
        return this.fail(
          new PromptStalledError(
            `prompt ${this.promptId} made no progress for ${seconds} s on server ${this.deps.http.server} (COMFYUI_STALL_SECONDS)`,
          ),
        );
      }
    } catch (error) {
      if (!(error instanceof ServerUnavailableError) || error instanceof ServerRefusedError) {
        return this.fail(error);
      }
      this.failedChecks += 1;
      if (this.failedChecks >= this.deps.timing.maxFailedChecks) return this.fail(error);
    } finally {
      this.checking = false;
    }
    this.arm();
  }

  /**
   * The outcome the socket alone tells: a success whose every output node was seen. Undefined
   * otherwise (a message missed while the socket was down, a failure): then `/history` decides.
   */
  private shownOutcome(): PromptOutcome | undefined {
    const { outputNodes } = this.options;
    if (!this.succeeded || !outputNodes.every((node) => node in this.shown)) return undefined;
    const entry: HistoryEntry = { outputs: this.shown, status: { status_str: 'success', completed: true } };
    return readHistoryEntry(entry, outputNodes, this.deps.http.server);
  }

  private get stallMs(): number {
    return this.options.stallMs ?? this.deps.timing.stallMs;
  }

  /** Where the prompt is: ended (history), running, waiting its turn in the server's queue, or lost. */
  private async lookUp(): Promise<PromptOutcome | { kind: 'lost' } | 'running' | 'waiting'> {
    const first = await this.historyEntry();
    if (first) return readHistoryEntry(first, this.options.outputNodes, this.deps.http.server);
    const queue = await this.deps.http.json<QueueBody>('GET', '/queue', { signal: this.options.signal });
    const ours = (item: readonly unknown[]) => item[1] === this.promptId;
    if ((queue.queue_running ?? []).some(ours)) return 'running';
    // Behind other prompts is no stall: the bound counts from when it starts to run.
    if ((queue.queue_pending ?? []).some(ours)) return 'waiting';
    // It may have ended between the two reads: history is written as it leaves the queue.
    const second = await this.historyEntry();
    if (second) return readHistoryEntry(second, this.options.outputNodes, this.deps.http.server);
    return { kind: 'lost' };
  }

  private async historyEntry(): Promise<HistoryEntry | undefined> {
    const path = `/history/${encodeURIComponent(this.promptId)}`;
    const body = await this.deps.http.json<Record<string, HistoryEntry>>('GET', path, {
      signal: this.options.signal,
    });
    const entry = body[this.promptId];
    // The socket may have missed the stamps the entry keeps.
    for (const [event, data] of entry?.status?.messages ?? []) {
      if (event === 'execution_start') this.serverStartedAt ??= stamp(data);
      if (event === 'execution_success') this.serverEndedAt ??= stamp(data);
    }
    return entry;
  }

  private settle(outcome: PromptOutcome | { kind: 'lost' }): void {
    if (outcome.kind === 'success') {
      const timing: PromptTiming = {
        submittedAt: this.submittedAt,
        ...(this.serverStartedAt === undefined ? {} : { serverStartedAt: this.serverStartedAt }),
        ...(this.serverEndedAt === undefined ? {} : { serverEndedAt: this.serverEndedAt }),
        endSeenAt: Date.now(),
      };
      this.end((following) =>
        following.resolve({ files: outcome.files, texts: outcome.texts ?? [], timing }),
      );
      return;
    }
    const server = this.deps.http.server;
    this.fail(
      outcome.kind === 'lost'
        ? new PromptLostError(`server ${server} no longer knows prompt ${this.promptId} (it restarted?)`)
        : outcome.outOfMemory
          ? new ServerOutOfMemoryError(outcome.message)
          : new PromptFailedError(outcome.message),
    );
  }

  private fail(error: unknown): void {
    this.end((following) => following.reject(error));
  }

  private end(action: (following: NonNullable<PromptFollower['following']>) => void): void {
    const following = this.following;
    if (!following) return;
    this.stop();
    action(following);
  }
}

/** A message's `timestamp` (ComfyUI's epoch milliseconds), when it has one. */
function stamp(data: Readonly<Record<string, unknown>>): number | undefined {
  return typeof data.timestamp === 'number' ? data.timestamp : undefined;
}
