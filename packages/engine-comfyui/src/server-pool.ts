import { EngineInputError, type EngineServer } from '@imagegen/engines';
import { type ComfyClient, ServerUnavailableError } from './contracts.ts';

/**
 * Which ComfyUI server runs the next prompt. Each server is kept busy but not flooded: at most
 * SLOTS_PER_SERVER prompts of ours on it at once (one running, one queued behind it, so the GPU
 * never waits for us and a dead server strands little). A free slot goes to the job waiting
 * longest; the job takes the server with the shortest queue, then one that last ran its
 * checkpoint (no needless model reload), then the one used least recently. Health comes from
 * `/system_stats`: a server that fails is skipped and checked again with a doubling backoff. A
 * server where a prompt stalled is suspect: it answers its checks, so it stays up, but it is
 * chosen only when no other server is free, until a prompt completes on it again.
 */

/** One prompt running and one queued behind it, per server. */
export const SLOTS_PER_SERVER = 2;

export interface PoolOptions {
  /** Between two checks of a healthy server (default 10 s). */
  readonly checkEveryMs?: number;
  /** First wait before a failed server is checked again, doubled per failure (default 1 s). */
  readonly backoffMs?: number;
  /** The longest wait between checks of a failed server (default 30 s). */
  readonly maxBackoffMs?: number;
  /** A check that takes longer fails (default 5 s). */
  readonly checkTimeoutMs?: number;
  /** How long a job waits while every server it may use is down before its attempt fails (default 30 s). */
  readonly downWaitMs?: number;
  readonly log?: (line: string) => void;
}

export interface SlotRequest {
  /** The checkpoint the prompt loads, for affinity. */
  readonly checkpoint?: string;
  /** Only servers of these names (the task's routing); absent: any. */
  readonly servers?: readonly string[];
  /** Not this server (a job that stalled on it runs again elsewhere). */
  readonly avoid?: ComfyClient;
  readonly signal: AbortSignal;
}

/** A slot on one server, held from submission until ComfyUI is done with the prompt. */
export interface ServerLease {
  readonly client: ComfyClient;
  /** The torch device type the server said it computes on at its last check (`cuda`, `cpu`…). */
  readonly device?: string;
  /** The prompt left the server's queue: the slot is free again. */
  release(): void;
  /** The prompt completed: the slot is free again, and the server is no longer suspect. */
  completed(): void;
  /** A prompt stalled there (and was interrupted): the slot is freed and the server is suspect. */
  suspect(error: Error): void;
  /** The server failed while we used it: the slot is freed and the server skipped until a check passes. */
  fail(error: Error): void;
}

interface Member {
  readonly client: ComfyClient;
  state: EngineServer['state'];
  inFlight: number;
  /** Others' prompts on the server at its last check. */
  foreign: number;
  checkpoint: string | null;
  /** The device type its last check named. */
  device?: string;
  failures: number;
  error?: string;
  /** Why the server is suspect (a prompt stalled there), until a prompt completes on it. */
  suspect?: string;
  /** Order of the last assignment, for least-recently-used ties. */
  lastUsed: number;
  timer?: NodeJS.Timeout;
  checking: boolean;
}

interface Waiter {
  readonly request: SlotRequest;
  readonly eligible: readonly Member[];
  resolve(lease: ServerLease): void;
  reject(error: Error): void;
  downTimer?: NodeJS.Timeout;
}

export class ServerPool {
  private readonly members: Member[];
  private readonly waiters: Waiter[] = [];
  private readonly o: Required<Omit<PoolOptions, 'log'>> & Pick<PoolOptions, 'log'>;
  private uses = 0;
  private closed = false;

  constructor(clients: readonly ComfyClient[], options: PoolOptions = {}) {
    this.members = clients.map((client) => ({
      client,
      state: 'unknown',
      inFlight: 0,
      foreign: 0,
      checkpoint: null,
      failures: 0,
      lastUsed: 0,
      checking: false,
    }));
    this.o = {
      checkEveryMs: options.checkEveryMs ?? 10_000,
      backoffMs: options.backoffMs ?? 1_000,
      maxBackoffMs: options.maxBackoffMs ?? 30_000,
      checkTimeoutMs: options.checkTimeoutMs ?? 5_000,
      downWaitMs: options.downWaitMs ?? 30_000,
      log: options.log,
    };
  }

  /** The server and group names, each once, in listing order: what `server_id` may name. */
  get names(): string[] {
    return [...new Set(this.members.map((member) => member.client.name))];
  }

  /** Prompts of ours the servers take at once. */
  get slots(): number {
    return this.members.length * SLOTS_PER_SERVER;
  }

  /** Checks every server once (a down one does not fail start-up), then keeps checking. */
  async start(): Promise<void> {
    await Promise.all(this.members.map((member) => this.check(member)));
  }

  /** Waits for a free slot on a server the request may use, and holds it. */
  acquire(request: SlotRequest): Promise<ServerLease> {
    request.signal.throwIfAborted();
    const eligible = this.eligible(request);
    if (eligible.length === 0) {
      const allowed = request.servers?.length ? request.servers.join(', ') : 'none of them';
      throw new EngineInputError(
        `no ComfyUI server here may run this task: its routing allows ${allowed}; ` +
          `the servers here are ${this.names.join(', ') || 'none'}`,
      );
    }
    return new Promise<ServerLease>((resolve, reject) => {
      const onAbort = () => {
        this.forget(waiter);
        reject(request.signal.reason);
      };
      const waiter: Waiter = {
        request,
        eligible,
        resolve: (lease) => {
          request.signal.removeEventListener('abort', onAbort);
          resolve(lease);
        },
        reject: (error) => {
          request.signal.removeEventListener('abort', onAbort);
          reject(error);
        },
      };
      request.signal.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
      this.dispatch();
    });
  }

  /** Whether a server other than `avoid` may run a job of this routing. */
  hasOther(avoid: ComfyClient, servers?: readonly string[]): boolean {
    return this.eligible({ avoid, ...(servers ? { servers } : {}) }).length > 0;
  }

  private eligible(request: Pick<SlotRequest, 'servers' | 'avoid'>): Member[] {
    return this.members.filter(
      (member) =>
        member.client !== request.avoid && (!request.servers || request.servers.includes(member.client.name)),
    );
  }

  /** Every server, for `/health`. */
  status(): EngineServer[] {
    return this.members.map((member) => ({
      name: member.client.name,
      url: member.client.url,
      state: member.state,
      queue: member.inFlight + member.foreign,
      inFlight: member.inFlight,
      checkpoint: member.checkpoint,
      ...(member.state === 'down' && member.error ? { error: member.error } : {}),
      ...(member.suspect ? { suspect: member.suspect } : {}),
    }));
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const member of this.members) clearTimeout(member.timer);
    for (const waiter of this.waiters.splice(0)) {
      clearTimeout(waiter.downTimer);
      waiter.reject(new ServerUnavailableError('the ComfyUI pool is closing'));
    }
    await Promise.all(this.members.map((member) => member.client.close()));
  }

  /** Hands free slots to waiting jobs, longest waiting first; a job that cannot go yet does not hold up the others. */
  private dispatch(): void {
    for (let n = 0; n < this.waiters.length; ) {
      const waiter = this.waiters[n]!;
      const member = this.pick(waiter);
      if (!member) {
        this.watchDown(waiter);
        n++;
        continue;
      }
      this.waiters.splice(n, 1);
      clearTimeout(waiter.downTimer);
      member.inFlight++;
      member.lastUsed = ++this.uses;
      if (waiter.request.checkpoint) member.checkpoint = waiter.request.checkpoint;
      waiter.resolve(this.lease(member));
    }
  }

  /** The rule: a server not suspect, then shortest queue, then the same checkpoint, then least recently used. */
  private pick(waiter: Waiter): Member | undefined {
    const wanted = waiter.request.checkpoint;
    let best: Member | undefined;
    for (const member of waiter.eligible) {
      if (member.state === 'down' || member.inFlight >= SLOTS_PER_SERVER) continue;
      if (!best || (best.suspect && !member.suspect)) {
        best = member;
        continue;
      }
      if (member.suspect && !best.suspect) continue;
      const queue = member.inFlight + member.foreign - (best.inFlight + best.foreign);
      const affinity = Number(best.checkpoint === wanted) - Number(member.checkpoint === wanted);
      if (
        queue < 0 ||
        (queue === 0 && (affinity < 0 || (affinity === 0 && member.lastUsed < best.lastUsed)))
      ) {
        best = member;
      }
    }
    return best;
  }

  private lease(member: Member): ServerLease {
    let held = true;
    const giveBack = () => {
      if (!held) return false;
      held = false;
      member.inFlight--;
      return true;
    };
    return {
      client: member.client,
      ...(member.device ? { device: member.device } : {}),
      release: () => {
        if (giveBack()) this.dispatch();
      },
      completed: () => {
        if (member.suspect) this.o.log?.(`ComfyUI server ${member.client.name} completed a prompt again`);
        member.suspect = undefined;
        if (giveBack()) this.dispatch();
      },
      suspect: (error) => {
        if (!member.suspect)
          this.o.log?.(
            `ComfyUI server ${member.client.name} (${member.client.url}) is suspect: ${error.message}`,
          );
        member.suspect = error.message;
        if (giveBack()) this.dispatch();
      },
      // Also after release: a server that dies while we download its outputs is down all the same.
      fail: (error) => {
        giveBack();
        if (member.state !== 'down') this.markDown(member, error);
        this.dispatch();
      },
    };
  }

  /** While every server a job may use is down, it waits at most downWaitMs for one to come back. */
  private watchDown(waiter: Waiter): void {
    const allDown = waiter.eligible.every((member) => member.state === 'down');
    if (!allDown) {
      clearTimeout(waiter.downTimer);
      waiter.downTimer = undefined;
      return;
    }
    waiter.downTimer ??= setTimeout(() => {
      this.forget(waiter);
      const reasons = waiter.eligible.map((member) => `${member.client.name} (${member.error ?? 'down'})`);
      waiter.reject(new ServerUnavailableError(`no ComfyUI server is reachable: ${reasons.join(', ')}`));
    }, this.o.downWaitMs).unref();
  }

  private forget(waiter: Waiter): void {
    clearTimeout(waiter.downTimer);
    const at = this.waiters.indexOf(waiter);
    if (at >= 0) this.waiters.splice(at, 1);
  }

  private markDown(member: Member, error: Error): void {
    const was = member.state;
    member.state = 'down';
    member.failures++;
    member.error = error.message;
    if (was !== 'down')
      this.o.log?.(`ComfyUI server ${member.client.name} (${member.client.url}) is down: ${error.message}`);
    this.schedule(member, Math.min(this.o.maxBackoffMs, this.o.backoffMs * 2 ** (member.failures - 1)));
  }

  private async check(member: Member): Promise<void> {
    if (this.closed || member.checking) return;
    member.checking = true;
    clearTimeout(member.timer);
    try {
      const stats = await member.client.stats(AbortSignal.timeout(this.o.checkTimeoutMs));
      if (this.closed) return;
      if (member.state === 'down') this.o.log?.(`ComfyUI server ${member.client.name} is up again`);
      member.state = 'up';
      member.failures = 0;
      member.error = undefined;
      member.foreign = Math.max(0, stats.queueRemaining - member.inFlight);
      member.device = stats.device;
      this.schedule(member, this.o.checkEveryMs);
    } catch (error) {
      if (this.closed) return;
      this.markDown(member, error as Error);
    } finally {
      member.checking = false;
    }
    this.dispatch();
  }

  private schedule(member: Member, ms: number): void {
    clearTimeout(member.timer);
    if (this.closed) return;
    member.timer = setTimeout(() => void this.check(member), ms).unref();
  }
}
