import type { Queryable } from '@imagegen/db';
import type { EngineDescription } from '@imagegen/engines';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { RequestDurations } from './request-durations.ts';
import { getQueueDepths, type QueueDepth } from './sql/getQueueDepths.ts';

/** How long one reading of the queue serves scrapes: several scrapers cost one statement a second. */
const QUEUE_READING_MS = 1_000;

/** The states an engine server can be in; each gets a series per server name. */
const SERVER_STATES = ['unknown', 'up', 'down'] as const;

/** The engine servers of one name: how many are in each state, and their queues together. */
interface ServerGroup {
  engine: string;
  server: string;
  states: Map<string, number>;
  queue: number;
}

/** Labels hold route patterns, pipeline and engine names, never ids: the series count stays bounded. */
export interface MetricsOptions {
  /** Also export Node's process metrics (CPU, memory, event loop): one process, one registry. */
  processMetrics?: boolean;
  /** When set, /metrics answers only `Authorization: Bearer <token>` (METRICS_TOKEN). */
  token?: string;
}

/**
 * The Prometheus series of one process (prom-client, one registry each). Every role that runs in
 * the process records into the same registry, and every listener it has serves it at /metrics.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly token: string | undefined;

  readonly httpRequests = new RequestDurations(
    'imagegen_http_request_duration_seconds',
    'API requests by method, route pattern and status, and how long they took to answer',
    // Prefer: wait holds a submission for up to a minute.
    [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    this.registry,
  );
  readonly tasksSubmitted = new Counter({
    name: 'imagegen_tasks_submitted_total',
    help: 'Tasks queued through this API, by pipeline (the engine is chosen by the worker that claims it)',
    labelNames: ['pipeline'] as const,
    registers: [this.registry],
  });
  readonly tasksClaimed = this.taskCounter('claimed', 'Task attempts claimed by this worker');
  readonly tasksSucceeded = this.taskCounter('succeeded', 'Tasks this worker completed');
  readonly tasksFailed = this.taskCounter(
    'failed',
    'Tasks that failed for good here (attempts ran out, a final error, a lease that expired too often)',
  );
  readonly engineRuns = new Histogram({
    name: 'imagegen_engine_run_seconds',
    help: 'How long the engine took to run a task attempt, by pipeline and engine',
    labelNames: ['pipeline', 'engine'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800],
    registers: [this.registry],
  });
  readonly webhookAttempts = new Counter({
    name: 'imagegen_webhook_attempts_total',
    help: 'Webhook delivery attempts by outcome: delivered, retry (failed, tried again later), failed (gave up: the last attempt, or a refused URL or 410 Gone)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly retentionRemoved = new Counter({
    name: 'imagegen_retention_removed_total',
    help: 'What the retention sweeper of this process deleted for age, by kind: outputs and uploads (files with their records), tasks, webhook_attempts, analytics_events, search_events, idempotency_keys',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });

  readonly largeBodies = new Counter({
    name: 'imagegen_large_bodies_total',
    help: 'JSON bodies large enough to be read on a worker thread, by outcome: read, dropped (the client left before the thread took it), abandoned (it left while the thread read it)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly authFailures = new Counter({
    name: 'imagegen_auth_failures_total',
    help: 'Requests refused for their API key, by reason: missing, invalid (unknown or revoked; those answered 429 included)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly authThrottled = new Counter({
    name: 'imagegen_auth_throttled_total',
    help: 'Requests with an invalid API key answered 429 because their address sent too many (AUTH_FAILURE_BURST, AUTH_FAILURE_RATE)',
    registers: [this.registry],
  });

  private queueSource: Queryable | undefined;
  private queueReading: { at: number; rows: Promise<QueueDepth[]> } | undefined;
  private engineSource: (() => readonly EngineDescription[]) | undefined;

  constructor(options: MetricsOptions = {}) {
    this.token = options.token || undefined;
    if (options.processMetrics) collectDefaultMetrics({ register: this.registry });
    const metrics = this;
    this.queueGauge(
      'imagegen_queue_depth',
      'Queued tasks per routing pool (shared, owner:<id> for an owner’s own servers, server:<id>)',
      (row) => row.tasks,
    );
    this.queueGauge(
      'imagegen_queue_oldest_age_seconds',
      'Age of the oldest queued task per routing pool',
      (row) => row.oldest_seconds,
    );
    new Gauge({
      name: 'imagegen_engine_server_state',
      help: 'Engine servers (ComfyUI) by name and state: how many of the servers of that name are in it now',
      labelNames: ['engine', 'server', 'state'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const { engine, server, states } of metrics.servers().values()) {
          for (const state of SERVER_STATES) this.set({ engine, server, state }, states.get(state) ?? 0);
        }
      },
    });
    new Gauge({
      name: 'imagegen_engine_server_queue',
      help: 'Prompts running or waiting on each engine server (ours and others’, as of its last check)',
      labelNames: ['engine', 'server'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const { engine, server, queue } of metrics.servers().values())
          this.set({ engine, server }, queue);
      },
    });
  }

  /** Reports the queue's depth and age per routing pool, read from this database at scrape time. */
  watchQueue(db: Queryable): void {
    this.queueSource = db;
  }

  /** Reports the state of the process's engine servers (its engine registry's `describe`). */
  watchEngines(describe: () => readonly EngineDescription[]): void {
    this.engineSource = describe;
  }

  /** The exposition text Prometheus scrapes. */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  private taskCounter(event: string, help: string) {
    return new Counter({
      name: `imagegen_tasks_${event}_total`,
      help: `${help}, by pipeline and engine`,
      labelNames: ['pipeline', 'engine'] as const,
      registers: [this.registry],
    });
  }

  /** A gauge per routing pool, read from the queue when scraped. */
  private queueGauge(name: string, help: string, value: (row: QueueDepth) => number): void {
    const metrics = this;
    new Gauge({
      name,
      help,
      labelNames: ['route'] as const,
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const row of await metrics.readQueue()) this.set({ route: row.route }, value(row));
      },
    });
  }

  /** One statement a second at most, whatever the number of scrapes and gauges reading it. */
  private readQueue(): Promise<QueueDepth[]> {
    const db = this.queueSource;
    if (!db) return Promise.resolve([]);
    const now = Date.now();
    if (!this.queueReading || now - this.queueReading.at >= QUEUE_READING_MS) {
      // A failed read shows an empty queue for a second; the database's own alerts say why.
      const rows = getQueueDepths(db).catch(() => []);
      this.queueReading = { at: now, rows };
    }
    return this.queueReading.rows;
  }

  /** Servers sharing a name form a group: each series counts the group's members. */
  private servers(): Map<string, ServerGroup> {
    const groups = new Map<string, ServerGroup>();
    for (const engine of this.engineSource?.() ?? []) {
      for (const server of engine.servers ?? []) {
        const key = `${engine.name}\u0000${server.name}`;
        let group = groups.get(key);
        if (!group) {
          group = { engine: engine.name, server: server.name, states: new Map(), queue: 0 };
          groups.set(key, group);
        }
        group.states.set(server.state, (group.states.get(server.state) ?? 0) + 1);
        group.queue += server.queue;
      }
    }
    return groups;
  }
}

/** The process's metrics as the environment configures them (METRICS_TOKEN). */
export function metricsFromEnv(env: NodeJS.ProcessEnv): Metrics {
  return new Metrics({ processMetrics: true, ...(env.METRICS_TOKEN ? { token: env.METRICS_TOKEN } : {}) });
}
