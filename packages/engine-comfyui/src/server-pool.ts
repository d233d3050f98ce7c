import { EngineInputError, type EngineServer } from '@imagegen/engines';
import { type ComfyClient, ServerUnavailableError } from './contracts.ts';
import { type GraphNeed, ServerCapabilities } from './server-capabilities.ts';

/**
 * Which ComfyUI server runs the next prompt. Each server is kept busy but not flooded: at most
 * SLOTS_PER_SERVER prompts of ours on it at once (one running, one queued behind it, so the GPU
 * never waits for us and a dead server strands little). A free slot goes to the job waiting
 * longest; the job takes the server with the shortest queue, then one that last ran its
 * checkpoint (no needless model reload), then the one used least recently. Health comes from
 * `/system_stats`: a server that fails is skipped and checked again with a doubling backoff. A
 * server where a prompt stalled is suspect: it answers its checks, so it stays up, but it is
 * chosen only when no other server is free, until a prompt completes on it again; so is one that
 * runs out of memory a second time before a prompt completes there.
 *
 * What each server can run is read from it (`/object_info`: node classes, and the model files its
 * loaders offer) when it first answers, when it comes back, every few minutes, and when asked
 * (after a model is loaded or synced): a job goes only to a server that has what its graph needs.
 */

/** How soon a reading put off because the server was busy is tried again. */
const IDLE_RETRY_MS = 30_000;

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
  /** While a job waits for a down server, the longest wait between two checks of it (default 2 s). */
  readonly waitedBackoffMs?: number;
  /** Between two reads of what a server can run (default 5 min). */
  readonly capabilitiesEveryMs?: number;
  /**
   * A job no server seems able to run reads again what the servers lacking its needs can run,
   * unless they were read less than this ago (default 30 s): a file added since is found.
   */
  readonly capabilitiesFreshMs?: number;
  /** The pipelines a server with these capabilities can run (its `/health` entry). */
  readonly runnable?: (capabilities: ServerCapabilities) => readonly string[];
  /** A server answered for the first time, or again after it was down (it is cold: warm it up). */
  readonly onUp?: (client: ComfyClient) => void;
  readonly log?: (line: string) => void;
}

export interface SlotRequest {
  /** The checkpoint the prompt loads, for affinity. */
  readonly checkpoint?: string;
  /** Only servers of these names (the task's routing); absent: any. */
  readonly servers?: readonly string[];
  /** Not this server (a job that stalled on it runs again elsewhere). */
  readonly avoid?: ComfyClient;
  /** What the job's graph needs of a server (graphNeeds): only servers known to have it all. */
  readonly needs?: readonly GraphNeed[];
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
  /**
   * The prompt ran out of memory there: the slot is freed; a second time before a prompt
   * completes there makes the server suspect. Answers whether it is suspect now.
   */
  outOfMemory(error: Error): boolean;
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
  /** Out-of-memory failures there since it started, and since a prompt last completed there. */
  outOfMemory: number;
  outOfMemoryStreak: number;
  /** What it can run, as it last said; undefined until read. */
  capabilities?: ServerCapabilities;
  /** The pipelines those capabilities run (computed once per reading). */
  runs?: readonly string[];
  reading?: Promise<void>;
  capabilityTimer?: NodeJS.Timeout;
  /** When its next check is due (Date.now()). */
  nextCheckAt: number;
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
  private readonly o: Required<Omit<PoolOptions, 'log' | 'runnable' | 'onUp'>> &
    Pick<PoolOptions, 'log' | 'runnable' | 'onUp'>;
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
      outOfMemory: 0,
      outOfMemoryStreak: 0,
      nextCheckAt: 0,
    }));
    this.o = {
      checkEveryMs: options.checkEveryMs ?? 10_000,
      backoffMs: options.backoffMs ?? 1_000,
      maxBackoffMs: options.maxBackoffMs ?? 30_000,
      checkTimeoutMs: options.checkTimeoutMs ?? 5_000,
      downWaitMs: options.downWaitMs ?? 30_000,
      waitedBackoffMs: options.waitedBackoffMs ?? 2_000,
      capabilitiesEveryMs: options.capabilitiesEveryMs ?? 300_000,
      capabilitiesFreshMs: options.capabilitiesFreshMs ?? 30_000,
      runnable: options.runnable,
      onUp: options.onUp,
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
    // What the servers that answered can run is known before the first job.
    await Promise.all(this.members.map((member) => member.reading));
  }

  /**
   * Waits for a free slot on a server the request may use and can run its graph, and holds it.
   * Fails at once (EngineInputError) when the routing allows no server here, or when none of the
   * servers it allows has what the graph needs, naming what each lacks.
   */
  acquire(request: SlotRequest): Promise<ServerLease> {
    if (request.signal.aborted) return Promise.reject(request.signal.reason);
    const routed = this.eligible(request);
    if (routed.length === 0) {
      const allowed = request.servers?.length ? request.servers.join(', ') : 'none of them';
      return Promise.reject(
        new EngineInputError(
          `no ComfyUI server here may run this task: its routing allows ${allowed}; ` +
            `the servers here are ${this.names.join(', ') || 'none'}`,
        ),
      );
    }
    // In line when the graph needs nothing to check, so jobs queue in the order they asked.
    if (!request.needs?.length) return this.wait(request, routed);
    return this.capable(routed, request.needs).then((eligible) => this.wait(request, eligible));
  }

  /**
   * The members that can run a graph of these needs (those not read yet are given the benefit of
   * the doubt: the server itself refuses what it lacks). When none can, those read a while ago are
   * read again first, then the job fails naming what each lacks.
   */
  private async capable(members: Member[], needs: readonly GraphNeed[] | undefined): Promise<Member[]> {
    if (!needs?.length) return members;
    const fits = (member: Member) => !member.capabilities || member.capabilities.lacks(needs).length === 0;
    let capable = members.filter(fits);
    if (capable.length > 0) return capable;
    const stale = members.filter(
      (member) => Date.now() - member.capabilities!.readAt >= this.o.capabilitiesFreshMs,
    );
    if (stale.length > 0) {
      await Promise.all(stale.map((member) => this.readCapabilities(member)));
      capable = members.filter(fits);
      if (capable.length > 0) return capable;
    }
    throw new EngineInputError(this.lacking(members, needs));
  }

  /** What each server lacks, in one sentence for the task's owner. */
  private lacking(members: readonly Member[], needs: readonly GraphNeed[]): string {
    const each = members.map((member) => {
      const missing = member.capabilities?.lacks(needs) ?? [];
      return `server ${member.client.name} lacks ${missing.join(', ')}`;
    });
    return `no ComfyUI server here can run this graph: ${[...new Set(each)].join('; ')}`;
  }

  /**
   * What the servers a request may use lack of its graph's needs, or null when one of them has
   * everything (or is not read yet): the submission check, from what was last read, without I/O.
   */
  lacks(needs: readonly GraphNeed[], servers?: readonly string[]): string | null {
    const members = this.eligible(servers ? { servers } : {});
    if (members.length === 0 || !needs.length) return null;
    if (members.some((member) => !member.capabilities || member.capabilities.lacks(needs).length === 0))
      return null;
    return this.lacking(members, needs);
  }

  /**
   * The needs that keep the request off every server it may use (each server's lacks, together), as
   * read last; empty when one of them has everything or is not read yet.
   */
  missingNeeds(needs: readonly GraphNeed[], servers?: readonly string[]): GraphNeed[] {
    const members = this.eligible(servers ? { servers } : {});
    if (members.some((member) => !member.capabilities)) return [];
    return needs.filter((need) => members.some((member) => member.capabilities!.lacks([need]).length > 0));
  }

  /** The node definitions of a server that answered, for reading a graph's needs; undefined before any. */
  get reference(): ServerCapabilities | undefined {
    return this.members.find((member) => member.capabilities)?.capabilities;
  }

  /** Reads again what these servers (by name; all when absent) can run: after a load or a sync. */
  async refreshCapabilities(names?: readonly string[]): Promise<void> {
    await Promise.all(
      this.members
        .filter((member) => member.state === 'up' && (!names || names.includes(member.client.name)))
        .map((member) => this.readCapabilities(member)),
    );
  }

  private wait(request: SlotRequest, eligible: Member[]): Promise<ServerLease> {
    if (request.signal.aborted) return Promise.reject(request.signal.reason);
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
      outOfMemory: member.outOfMemory,
      ...(member.runs ? { runs: member.runs } : {}),
      ...(member.capabilities ? { nodeClasses: member.capabilities.classCount } : {}),
    }));
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const member of this.members) {
      clearTimeout(member.timer);
      clearTimeout(member.capabilityTimer);
    }
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
      const needs = waiter.request.needs;
      if (needs && waiter.eligible.every((member) => member.capabilities?.lacks(needs).length)) {
        // Every server it could use was read meanwhile and lacks something: it never will run here.
        this.forget(waiter);
        waiter.reject(new EngineInputError(this.lacking(waiter.eligible, needs)));
        continue;
      }
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
    const needs = waiter.request.needs;
    for (const member of waiter.eligible) {
      if (member.state === 'down' || member.inFlight >= SLOTS_PER_SERVER) continue;
      // Read since the job began to wait, and found lacking.
      if (needs && member.capabilities && member.capabilities.lacks(needs).length > 0) continue;
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
        member.outOfMemoryStreak = 0;
        if (giveBack()) this.dispatch();
      },
      outOfMemory: (error) => {
        member.outOfMemory += 1;
        member.outOfMemoryStreak += 1;
        this.o.log?.(`ComfyUI server ${member.client.name} ran out of memory: ${error.message}`);
        if (member.outOfMemoryStreak >= 2 && !member.suspect) {
          member.suspect = `it ran out of memory again before a prompt completed there (${error.message})`;
          this.o.log?.(
            `ComfyUI server ${member.client.name} (${member.client.url}) is suspect: ${member.suspect}`,
          );
        }
        if (giveBack()) this.dispatch();
        return member.suspect !== undefined;
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
    // Someone waits for these servers: check them often, whatever their backoff has grown to.
    for (const member of waiter.eligible) {
      if (member.nextCheckAt - Date.now() > this.o.waitedBackoffMs)
        this.schedule(member, this.o.waitedBackoffMs);
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
      const cameUp = member.state !== 'up';
      if (member.state === 'down') this.o.log?.(`ComfyUI server ${member.client.name} is up again`);
      member.state = 'up';
      if (cameUp) this.cameUp(member);
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
    member.nextCheckAt = Date.now() + ms;
    member.timer = setTimeout(() => void this.check(member), ms).unref();
  }

  /**
   * A server that answers for the first time or again: it may have restarted (other nodes, other
   * files, nothing loaded), so what it can run is read again and it is warmed up; the prompts given
   * up on while it was unreachable are taken back from it.
   */
  private cameUp(member: Member): void {
    void this.readCapabilities(member);
    void member.client.retake(AbortSignal.timeout(this.o.checkTimeoutMs)).then(
      (taken) => {
        if (taken > 0)
          this.o.log?.(`ComfyUI server ${member.client.name}: took back ${taken} prompt(s) given up on`);
      },
      () => {},
    );
    this.o.onUp?.(member.client);
  }

  /**
   * The next scheduled reading, taken when the server runs none of our prompts: ComfyUI builds
   * `/object_info` in its request thread, which holds the Python lock its prompt worker needs, so
   * a reading mid-prompt would lengthen the prompt (a load or a sync reads at once all the same).
   */
  private scheduleReading(member: Member, ms: number): void {
    clearTimeout(member.capabilityTimer);
    member.capabilityTimer = setTimeout(() => {
      if (member.inFlight > 0) this.scheduleReading(member, IDLE_RETRY_MS);
      else void this.readCapabilities(member);
    }, ms).unref();
  }

  /** Reads what a server can run (one reading at a time per server), then again on schedule. */
  private readCapabilities(member: Member): Promise<void> {
    member.reading ??= (async () => {
      clearTimeout(member.capabilityTimer);
      try {
        const info = await member.client.objectInfo(
          AbortSignal.timeout(Math.max(this.o.checkTimeoutMs, 30_000)),
        );
        if (this.closed) return;
        member.capabilities = new ServerCapabilities(info, Date.now());
        member.runs = this.o.runnable?.(member.capabilities);
      } catch (error) {
        this.o.log?.(
          `ComfyUI server ${member.client.name}: reading what it can run failed: ${(error as Error).message}`,
        );
      } finally {
        member.reading = undefined;
        if (!this.closed) this.scheduleReading(member, this.o.capabilitiesEveryMs);
      }
      this.dispatch();
    })();
    return member.reading;
  }
}
