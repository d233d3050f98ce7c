/**
 * A test engine the test steers: a job whose prompt starts with `gate:NAME` waits inside the
 * engine until the test opens gate NAME (or the worker aborts it), reporting the progress the test
 * gives it; any other job draws at once, as the harness's plain engine does.
 */
import { randomBytes } from 'node:crypto';
import type { Engine, EngineJob, RunContext } from '@imagegen/engines';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { type ApiHarness, type HarnessOptions, plainEngine, startApiHarness } from './api-harness.ts';

export interface Gate {
  /** Resolves when a job of this gate is inside the engine. */
  readonly started: Promise<void>;
  /** Resolves when that job left the engine: drew its images, or gave up on an abort. */
  readonly settled: Promise<'finished' | 'aborted'>;
  /** When the job left the engine (ms since the epoch), once it has. */
  readonly settledAt: number | undefined;
  /** The reason the job's signal carried, if it was aborted. */
  readonly abortReason: string | undefined;
  /** Reports progress as the engine would. */
  progress(fraction: number): void;
  /** Lets the job finish drawing. */
  open(): void;
}

export interface GatedEngine extends Engine {
  gate(name: string): Gate;
  /** Opens every gate: after a failed test, the next one finds the workers free. */
  openAll(): void;
}

class GateState implements Gate {
  readonly started: Promise<void>;
  readonly settled: Promise<'finished' | 'aborted'>;
  settledAt: number | undefined;
  abortReason: string | undefined;
  private markStarted!: () => void;
  private markSettled!: (how: 'finished' | 'aborted') => void;
  private opened!: () => void;
  private readonly opening: Promise<void>;
  private ctx: RunContext | undefined;

  constructor() {
    this.started = new Promise((resolve) => {
      this.markStarted = resolve;
    });
    this.settled = new Promise((resolve) => {
      this.markSettled = resolve;
    });
    this.opening = new Promise((resolve) => {
      this.opened = resolve;
    });
  }

  progress(fraction: number): void {
    this.ctx?.progress(fraction);
  }

  open(): void {
    this.opened();
  }

  /** The job's wait inside the engine: until the gate opens, or the signal aborts. */
  async hold(ctx: RunContext): Promise<void> {
    this.ctx = ctx;
    this.markStarted();
    const aborted = new Promise<never>((_resolve, reject) => {
      const onAbort = () => reject(ctx.signal.reason);
      if (ctx.signal.aborted) onAbort();
      else ctx.signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      await Promise.race([this.opening, aborted]);
      this.settle('finished');
    } catch (error) {
      this.abortReason = (error as Error)?.message;
      this.settle('aborted');
      throw error;
    }
  }

  private settle(how: 'finished' | 'aborted'): void {
    this.settledAt = Date.now();
    this.markSettled(how);
  }
}

export function gatedEngine(): GatedEngine {
  const plain = plainEngine();
  const gates = new Map<string, GateState>();
  const gate = (name: string) => {
    let found = gates.get(name);
    if (!found) {
      found = new GateState();
      gates.set(name, found);
    }
    return found;
  };
  return {
    ...plain,
    name: 'gated',
    gate,
    openAll() {
      for (const each of gates.values()) each.open();
    },
    async run(job: EngineJob, ctx: RunContext) {
      const name = /^gate:(\S+)/.exec(String(job.input.prompt ?? job.input.model_name ?? ''))?.[1];
      if (name) await gate(name).hold(ctx);
      return plain.run(job, ctx);
    },
  };
}

/**
 * For a describe block: the API harness with a gated engine, started before its tests, every gate
 * opened after each test (a failed test leaves no worker held for the next), closed after all.
 * Read `api` and `engine` inside the tests.
 */
export function gatedApi(options: Omit<HarnessOptions, 'engine'> = {}): {
  readonly api: ApiHarness;
  readonly engine: GatedEngine;
} {
  const gated = {} as { api: ApiHarness; engine: GatedEngine };
  beforeAll(async () => {
    gated.engine = gatedEngine();
    gated.api = await startApiHarness({ ...options, engine: gated.engine });
  });
  afterEach(() => gated.engine.openAll());
  afterAll(() => gated.api.close());
  return gated;
}

/** A fresh name for a gate or a key: the tests of a file share one engine and one database. */
export function uniqueName(): string {
  return randomBytes(4).toString('hex');
}
