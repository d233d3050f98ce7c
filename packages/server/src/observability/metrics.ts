import { endpoints } from '@imagegen/contract';
import type { Queryable } from '@imagegen/db';
import type { EngineDescription } from '@imagegen/engines';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { RequestDurations } from './request-durations.ts';
import { getQueueSignals, type QueueSignal } from './sql/getQueueSignals.ts';
import { getWebhookBacklog, type WebhookBacklog } from './sql/getWebhookBacklog.ts';

/**
 * How long one reading of the queue serves scrapes: several scrapers cost one statement a second,
 * or, when the reading is slow (a backlog of a hundred thousand tasks takes a good part of a
 * second), ten times its own duration, so the database never spends more than a tenth of its time
 * on it.
 */
const QUEUE_READING_MS = 1_000;
const QUEUE_READING_SHARE = 10;

/**
 * The pipelines that queue tasks: each has its queue series from the first scrape on, at 0 while
 * idle, so a scaler's query never meets a missing series. A fixed set: the label stays bounded.
 */
const TASK_PIPELINES = endpoints
  .filter((row) => row.kind === 'generation' || row.kind === 'load_model' || row.kind === 'training')
  .map((row) => row.path);

/** What the queue reading says of one routing pool or one pipeline. */
interface QueueFigures {
  queued: number;
  oldestSeconds: number;
  running: number;
}

/** The queue reading summed both ways: per routing pool and per pipeline; and the webhook outbox's. */
interface QueueReading {
  routes: Map<string, QueueFigures>;
  pipelines: Map<string, QueueFigures>;
  webhooks: WebhookBacklog;
}

/** The gauges read from the queue: name, help, what they are per, and their figure. */
const QUEUE_GAUGES: readonly [string, string, 'route' | 'pipeline', (figures: QueueFigures) => number][] = [
  [
    'imagegen_queue_depth',
    'Queued tasks per routing pool (shared, owner:<id> for an owner’s own servers, server:<id>)',
    'route',
    (row) => row.queued,
  ],
  [
    'imagegen_queue_oldest_age_seconds',
    'Age of the oldest queued task per routing pool',
    'route',
    (row) => row.oldestSeconds,
  ],
  [
    'imagegen_running_tasks',
    'Tasks running now per routing pool (every worker’s, from the database)',
    'route',
    (row) => row.running,
  ],
  [
    'imagegen_pipeline_queue_depth',
    'Queued tasks per pipeline (its submission path): which kind of worker to add',
    'pipeline',
    (row) => row.queued,
  ],
  [
    'imagegen_pipeline_queue_oldest_age_seconds',
    'Age of the oldest queued task per pipeline',
    'pipeline',
    (row) => row.oldestSeconds,
  ],
  [
    'imagegen_pipeline_running_tasks',
    'Tasks running now per pipeline (every worker’s, from the database)',
    'pipeline',
    (row) => row.running,
  ],
];

/** The states an engine server can be in; each gets a series per server name. */
const SERVER_STATES = ['unknown', 'up', 'down'] as const;

/** The engine servers of one name: how many are in each state, and their queues together. */
interface ServerGroup {
  engine: string;
  server: string;
  states: Map<string, number>;
  queue: number;
  /** Our prompts on the group's servers now. */
  inFlight: number;
  /** The group's servers with a prompt running or waiting (ours or others'). */
  busy: number;
  /** The group's servers where a prompt stalled and none has completed since. */
  suspect: number;
  /** Out-of-memory failures on the group's servers since this process started. */
  outOfMemory: number;
  /** Per pipeline, how many of the group's servers can run it (as they last said). */
  runs: Map<string, number>;
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
  // The usage totals of the tasks settled here; the per-owner view is /usage/v1, never a label.
  readonly taskImages = this.usageCounter('images', 'Images the tasks that succeeded here produced');
  readonly taskPixels = this.usageCounter('pixels', 'Pixels (width × height) of those images');
  readonly taskRunSeconds = this.usageCounter(
    'run_seconds',
    "Seconds from a worker's start of each task settled here to its end",
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
    help: 'What the retention sweeper of this process deleted for age, by kind: outputs and uploads (files with their records), tasks, webhook_attempts, analytics_events, search_events, idempotency_keys, usage_records',
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
  private queueReading: { at: number; reading: Promise<QueueReading> } | undefined;
  /** How long the last reading took to come back. */
  private queueReadingMs = 0;
  private engineSource: (() => readonly EngineDescription[]) | undefined;

  constructor(options: MetricsOptions = {}) {
    this.token = options.token || undefined;
    if (options.processMetrics) collectDefaultMetrics({ register: this.registry });
    const metrics = this;
    for (const [name, help, by, value] of QUEUE_GAUGES) this.queueGauge(name, help, by, value);
    for (const [name, help, value] of [
      [
        'imagegen_webhook_backlog',
        'Webhook calls waiting to be delivered (first tries and retries), from the outbox',
        (backlog: WebhookBacklog) => backlog.pending,
      ],
      [
        'imagegen_webhook_backlog_oldest_age_seconds',
        'Age of the oldest webhook call waiting to be delivered',
        (backlog: WebhookBacklog) => backlog.oldest_seconds,
      ],
    ] as const) {
      new Gauge({
        name,
        help,
        registers: [this.registry],
        async collect() {
          this.set(value((await metrics.readQueue()).webhooks));
        },
      });
    }
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
    this.serverGauge(
      'imagegen_engine_server_in_flight',
      'Prompts of this worker running or waiting on each engine server group now',
      (group) => group.inFlight,
    );
    this.serverGauge(
      'imagegen_engine_server_busy_ratio',
      'Fraction of the servers of each group with a prompt running or waiting (ours or others’, as of its last check)',
      (group) => group.busy / [...group.states.values()].reduce((sum, n) => sum + n, 0),
    );
    this.serverGauge(
      'imagegen_engine_server_suspect',
      'Engine servers of each group that are suspect: a prompt stalled there (COMFYUI_STALL_SECONDS), or ran out of memory twice, and none has completed since',
      (group) => group.suspect,
    );
    new Counter({
      name: 'imagegen_engine_server_out_of_memory_total',
      help: 'Prompts that ran out of memory on each engine server group (each frees the server; a job’s first one runs it once more, elsewhere when it can)',
      labelNames: ['engine', 'server'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const group of metrics.servers().values())
          this.inc({ engine: group.engine, server: group.server }, group.outOfMemory);
      },
    });
    const budget = (figure: 'bytes' | 'budgetBytes') =>
      function (this: Gauge) {
        this.reset();
        for (const engine of metrics.engineSource?.() ?? []) {
          const models = engine.figures?.models;
          if (models) this.set({ engine: engine.name }, models[figure]);
        }
      };
    new Gauge({
      name: 'imagegen_engine_models_bytes',
      help: 'Bytes of the model files owners loaded that the engine keeps within its disk budget (COMFYUI_MODELS_BUDGET), in its fullest model folder',
      labelNames: ['engine'] as const,
      registers: [this.registry],
      collect: budget('bytes'),
    });
    new Gauge({
      name: 'imagegen_engine_models_budget_bytes',
      help: 'The disk budget of the model files owners load (COMFYUI_MODELS_BUDGET)',
      labelNames: ['engine'] as const,
      registers: [this.registry],
      collect: budget('budgetBytes'),
    });
    new Counter({
      name: 'imagegen_engine_model_evictions_total',
      help: 'Model files owners loaded that were removed to keep within the disk budget (least recently used first; fetched again when a job names them)',
      labelNames: ['engine'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const engine of metrics.engineSource?.() ?? []) {
          const models = engine.figures?.models;
          if (models) this.inc({ engine: engine.name }, models.evictions);
        }
      },
    });
    new Gauge({
      name: 'imagegen_engine_server_can_run',
      help: 'Servers of each engine server group that can run each pipeline, as they last said what they have (node classes every request of it uses)',
      labelNames: ['engine', 'server', 'pipeline'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const group of metrics.servers().values()) {
          for (const [pipeline, count] of group.runs)
            this.set({ engine: group.engine, server: group.server, pipeline }, count);
        }
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
    return this.pipelineEngineCounter(`imagegen_tasks_${event}_total`, help);
  }

  private usageCounter(what: string, help: string) {
    return this.pipelineEngineCounter(`imagegen_task_${what}_total`, help);
  }

  private pipelineEngineCounter(name: string, help: string) {
    return new Counter({
      name,
      help: `${help}, by pipeline and engine`,
      labelNames: ['pipeline', 'engine'] as const,
      registers: [this.registry],
    });
  }

  /** A gauge per routing pool or per pipeline, read from the queue when scraped. */
  private queueGauge(
    name: string,
    help: string,
    by: 'route' | 'pipeline',
    value: (figures: QueueFigures) => number,
  ): void {
    const metrics = this;
    new Gauge({
      name,
      help,
      labelNames: [by],
      registers: [this.registry],
      async collect() {
        this.reset();
        const reading = await metrics.readQueue();
        for (const [key, figures] of by === 'route' ? reading.routes : reading.pipelines)
          this.set({ [by]: key }, value(figures));
      },
    });
  }

  /** A gauge per engine server group, from the process's engines when scraped. */
  private serverGauge(name: string, help: string, value: (group: ServerGroup) => number): void {
    const metrics = this;
    new Gauge({
      name,
      help,
      labelNames: ['engine', 'server'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const group of metrics.servers().values())
          this.set({ engine: group.engine, server: group.server }, value(group));
      },
    });
  }

  /** One statement a second at most, whatever the number of scrapes and gauges reading it. */
  private readQueue(): Promise<QueueReading> {
    const db = this.queueSource;
    if (!db) return Promise.resolve({ routes: new Map(), pipelines: new Map(), webhooks: NO_BACKLOG });
    const now = Date.now();
    const reuseMs = Math.max(QUEUE_READING_MS, QUEUE_READING_SHARE * this.queueReadingMs);
    if (!this.queueReading || now - this.queueReading.at >= reuseMs) {
      // A failed read shows an empty queue for a second; the database's own alerts say why.
      const reading = Promise.all([
        getQueueSignals(db).catch(() => []),
        getWebhookBacklog(db).catch(() => NO_BACKLOG),
      ]).then(([rows, webhooks]) => {
        this.queueReadingMs = Date.now() - now;
        return { ...summed(rows), webhooks };
      });
      this.queueReading = { at: now, reading };
    }
    return this.queueReading.reading;
  }

  /** Servers sharing a name form a group: each series counts the group's members. */
  private servers(): Map<string, ServerGroup> {
    const groups = new Map<string, ServerGroup>();
    for (const engine of this.engineSource?.() ?? []) {
      for (const server of engine.servers ?? []) {
        const key = `${engine.name}\u0000${server.name}`;
        let group = groups.get(key);
        if (!group) {
          group = {
            engine: engine.name,
            server: server.name,
            states: new Map(),
            queue: 0,
            inFlight: 0,
            busy: 0,
            suspect: 0,
            outOfMemory: 0,
            // Every pipeline the engine serves has its series, at 0 where no server can run it.
            runs: new Map(engine.pipelines.map((pipeline) => [pipeline, 0])),
          };
          groups.set(key, group);
        }
        group.outOfMemory += server.outOfMemory ?? 0;
        for (const pipeline of server.runs ?? []) {
          if (group.runs.has(pipeline)) group.runs.set(pipeline, group.runs.get(pipeline)! + 1);
        }
        group.states.set(server.state, (group.states.get(server.state) ?? 0) + 1);
        group.queue += server.queue;
        group.inFlight += server.inFlight;
        if (server.queue > 0) group.busy++;
        if (server.suspect) group.suspect++;
      }
    }
    return groups;
  }
}

const NO_BACKLOG: WebhookBacklog = { pending: 0, oldest_seconds: 0 };

/** The rows of one reading summed per routing pool and per pipeline; every pipeline is there. */
function summed(rows: readonly QueueSignal[]): Omit<QueueReading, 'webhooks'> {
  const empty = (): QueueFigures => ({ queued: 0, oldestSeconds: 0, running: 0 });
  const reading: Omit<QueueReading, 'webhooks'> = {
    routes: new Map(),
    pipelines: new Map(TASK_PIPELINES.map((pipeline) => [pipeline, empty()])),
  };
  const add = (map: Map<string, QueueFigures>, key: string, row: QueueSignal) => {
    const figures = map.get(key) ?? empty();
    map.set(key, figures);
    if (row.state === 'running') {
      figures.running += row.tasks;
    } else {
      figures.queued += row.tasks;
      figures.oldestSeconds = Math.max(figures.oldestSeconds, row.oldest_seconds);
    }
  };
  for (const row of rows) {
    add(reading.routes, row.route, row);
    add(reading.pipelines, row.pipeline, row);
  }
  return reading;
}

/** The process's metrics as the environment configures them (METRICS_TOKEN). */
export function metricsFromEnv(env: NodeJS.ProcessEnv): Metrics {
  return new Metrics({ processMetrics: true, ...(env.METRICS_TOKEN ? { token: env.METRICS_TOKEN } : {}) });
}
