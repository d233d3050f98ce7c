import { randomUUID } from 'node:crypto';
import { endpointByPath } from '@imagegen/contract';
import { type ComfyClient, createComfyClient } from '@imagegen/engine-comfyui/engine';
import type { EngineJob, InputImage } from '@imagegen/engines';
import {
  caseJob,
  compileCase,
  PIPELINE_SUITE,
  type PipelineCase,
  unmetNeeds,
} from './comfyui-pipeline-suite.ts';
import { placeOwnerModels } from './comfyui-server-suite.ts';

/**
 * The pipeline suite's graphs validated by a ComfyUI server, nothing computed
 * (`test:comfyui -- URL --validate-only`): each case's graph, compiled by the engine's compilers
 * with the deployment's checkpoints and the names the server gave its uploads, is POSTed to
 * `/prompt`, where ComfyUI checks every node class, input, type and choice (sampler, scheduler,
 * model file) before it queues anything; an accepted prompt is taken back at once. A run of the
 * whole suite takes hours on a CPU server; this takes seconds per case, and tells which graphs a
 * server refuses, in its own words.
 */

export interface ValidationOutcome {
  readonly name: string;
  readonly pipeline: string;
  readonly outcome: 'accepted' | 'rejected' | 'skipped';
  /**
   * Accepted: what the server did with the prompt before it was taken back; rejected: the server's
   * error body, condensed (one clause per error); skipped: why the graph could not be made.
   */
  readonly detail: string;
  /** The server's answer to POST /prompt as it came (rejected: its error body). */
  readonly answer?: unknown;
}

export interface ValidationSuiteOptions {
  /** COMFYUI_CHECKPOINTS of the deployment under test. */
  readonly checkpoints?: Readonly<Record<string, string>>;
  /** The `models/` folder the server reads: where an owner's model of a case is placed. */
  readonly modelsDir?: string;
  /** The cases to validate (default: the whole suite). */
  readonly cases?: readonly PipelineCase[];
  readonly onOutcome?: (outcome: ValidationOutcome) => void;
  /** A client of one's own (default: one for `url`); it uploads the inputs. */
  readonly client?: ComfyClient;
  /** How long a prompt that started may take to stop after its interrupt (default 10 min). */
  readonly takeBackMs?: number;
}

export async function validateSuite(
  url: string,
  options: ValidationSuiteOptions = {},
): Promise<ValidationOutcome[]> {
  const client = options.client ?? createComfyClient({ url });
  const checkpoints = options.checkpoints ?? {};
  const server = new ServerApi(url);
  const { device } = await client.stats();
  const filesIn = (folder: string) => client.models(folder).then((names) => new Set(names));
  const outcomes: ValidationOutcome[] = [];
  for (const testCase of options.cases ?? PIPELINE_SUITE) {
    const settle = (outcome: ValidationOutcome['outcome'], detail: string, answer?: unknown) => {
      const result = {
        name: testCase.name,
        pipeline: testCase.pipeline,
        outcome,
        detail,
        ...(answer === undefined ? {} : { answer }),
      };
      outcomes.push(result);
      options.onOutcome?.(result);
    };
    const unmapped = unmetNeeds(testCase, checkpoints);
    if (unmapped.length > 0) {
      settle('skipped', `COMFYUI_CHECKPOINTS maps no ${unmapped.join(', ')}`);
      continue;
    }
    const placed = await placeOwnerModels(testCase, options.modelsDir, filesIn);
    if (placed) {
      settle('skipped', placed);
      continue;
    }
    const promptId = randomUUID();
    let prompt: ReturnType<typeof compileCase>['prompt'];
    try {
      const job = await caseJob(testCase);
      ({ prompt } = compileCase(testCase, job, checkpoints, {
        images: await uploadInputs(client, job),
        submission: promptId,
        ...(device ? { device } : {}),
      }));
    } catch (error) {
      // A choice variant the contract or the compiler refuses never reaches a server.
      settle('skipped', `not compiled: ${(error as Error).message}`);
      continue;
    }
    const { status, answer } = await server.submit(prompt, promptId);
    const errors = answer as RejectionAnswer;
    if (status === 200 && Object.keys(errors.node_errors ?? {}).length === 0) {
      settle('accepted', await server.takeBack(promptId, prompt, options.takeBackMs ?? 600_000));
      continue;
    }
    // 200 with node_errors: ComfyUI queued the outputs that validated and dropped the others.
    if (status === 200) await server.takeBack(promptId, prompt, options.takeBackMs ?? 600_000);
    settle('rejected', `${status}: ${condense(errors)}`, answer);
  }
  return outcomes;
}

/** Every input picture uploaded as the engine uploads it; the names the server gave them. */
async function uploadInputs(client: ComfyClient, job: EngineJob): Promise<Record<string, string | string[]>> {
  const names: Record<string, string | string[]> = {};
  const one = async (field: string, image: InputImage, n?: number) =>
    client.upload({
      name: `imagegen-validate-${field}${n === undefined ? '' : `-${n}`}.png`,
      data: await image.read(),
      contentType: image.contentType,
    });
  for (const [field, value] of Object.entries(job.images)) {
    names[field] = Array.isArray(value)
      ? await Promise.all((value as InputImage[]).map((image, n) => one(field, image, n)))
      : await one(field, value as InputImage);
  }
  return names;
}

interface ServerError {
  readonly type?: string;
  readonly message?: string;
  readonly details?: string;
  readonly extra_info?: { readonly input_name?: string };
}

interface RejectionAnswer {
  readonly error?: ServerError | string;
  readonly node_errors?: Readonly<
    Record<string, { readonly class_type?: string; readonly errors?: readonly ServerError[] }>
  >;
}

/** A rejection in one line: the prompt's error, then each node's (`node 3 KSampler: …`). */
export function condense(answer: RejectionAnswer): string {
  const clause = (error: ServerError) =>
    [
      error.type,
      error.message,
      error.details,
      error.extra_info?.input_name && `input ${error.extra_info.input_name}`,
    ]
      .filter(Boolean)
      .join(': ');
  const parts = [typeof answer.error === 'string' ? answer.error : answer.error ? clause(answer.error) : ''];
  for (const [node, { class_type, errors }] of Object.entries(answer.node_errors ?? {})) {
    for (const error of errors ?? []) parts.push(`node ${node} ${class_type ?? '?'}: ${clause(error)}`);
  }
  return parts.filter(Boolean).join('; ') || JSON.stringify(answer);
}

/** The few calls of ComfyUI's HTTP API validation needs, with the server's bodies as they come. */
class ServerApi {
  private readonly clientId = randomUUID();
  constructor(private readonly url: string) {}

  async submit(prompt: unknown, promptId: string): Promise<{ status: number; answer: unknown }> {
    const response = await fetch(new URL('prompt', this.base()), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ prompt, client_id: this.clientId, prompt_id: promptId }),
    });
    const text = await response.text();
    try {
      return { status: response.status, answer: JSON.parse(text) };
    } catch {
      return { status: response.status, answer: { error: text.trim() } };
    }
  }

  /**
   * Takes an accepted prompt back: removed while it waits, interrupted once it runs (ComfyUI's
   * worker takes a prompt from an idle queue within a millisecond, so it has usually started; it
   * stops before the next node). The queue gives no event for it, so it is polled. Answers what
   * the server did with the prompt, from its history.
   */
  async takeBack(
    promptId: string,
    prompt: Readonly<Record<string, { class_type: string }>>,
    limitMs: number,
  ) {
    const until = Date.now() + limitMs;
    for (;;) {
      await this.post('queue', { delete: [promptId] });
      await this.post('interrupt', { prompt_id: promptId });
      const queue = (await this.get('queue')) as { queue_running?: unknown[][]; queue_pending?: unknown[][] };
      const held = [...(queue.queue_running ?? []), ...(queue.queue_pending ?? [])].some(
        (item) => item[1] === promptId,
      );
      if (!held) break;
      if (Date.now() > until) return `still held by the server after ${limitMs / 1000} s`;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const history = (await this.get(`history/${promptId}`)) as Record<string, HistoryEntry>;
    const entry = history[promptId];
    if (!entry) return 'removed from the queue before it started';
    const classOf = (node: string) => `${prompt[node]?.class_type ?? '?'} (${node})`;
    const messages = entry.status?.messages ?? [];
    const cached = messages.find(([kind]) => kind === 'execution_cached')?.[1].nodes ?? [];
    const stopped = messages.find(([kind]) => kind === 'execution_interrupted')?.[1];
    const ran = (stopped?.executed ?? []).filter((node) => !cached.includes(node));
    const before = ran.length > 0 ? `after running ${ran.map(classOf).join(', ')}` : 'before running a node';
    if (stopped) return `interrupted ${before}${stopped.node_id ? `, at ${classOf(stopped.node_id)}` : ''}`;
    return entry.status?.status_str === 'success'
      ? 'ran to its end before it could be taken back (a graph of a second or so)'
      : `not interrupted: ${entry.status?.status_str ?? 'no status'}`;
  }

  private base(): URL {
    const base = new URL(this.url);
    if (!base.pathname.endsWith('/')) base.pathname += '/';
    return base;
  }

  private async post(path: string, body: unknown): Promise<void> {
    const response = await fetch(new URL(path, this.base()), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    await response.arrayBuffer();
  }

  private async get(path: string): Promise<unknown> {
    const response = await fetch(new URL(path, this.base()));
    return response.json();
  }
}

interface HistoryEntry {
  readonly status?: {
    readonly status_str?: string;
    readonly messages?: readonly [
      string,
      {
        readonly nodes?: readonly string[];
        readonly executed?: readonly string[];
        readonly node_id?: string;
      },
    ][];
  };
}

/**
 * The suite's cases are one request each; a choice field (`scheduler`, `operation`, `style`, a
 * named adapter in a list) compiles to another sampler, scheduler, node or file per value, and a
 * number field's extremes reach node inputs with bounds of their own (steps, cfg, denoise, sizes,
 * strengths). Per pipeline and such field of its request schema, the first case that sets the
 * field (for a single value, else the pipeline's first case) once more with each other value of a
 * choice, and with a number's lowest and highest accepted value (an exclusive bound: the nearest
 * value inside, 1 or 0.01 away); in a list, in place of its first item. So every value the API
 * accepts is shown to the server (`--every-choice`).
 */
export function choiceVariants(cases: readonly PipelineCase[] = PIPELINE_SUITE): PipelineCase[] {
  const byPipeline = new Map<string, PipelineCase[]>();
  for (const testCase of cases)
    byPipeline.set(testCase.pipeline, [...(byPipeline.get(testCase.pipeline) ?? []), testCase]);
  const variants: PipelineCase[] = [];
  for (const [pipeline, ofPipeline] of byPipeline) {
    const properties = (endpointByPath(pipeline)?.request as SchemaNode | undefined)?.properties ?? {};
    for (const [field, schema] of Object.entries(properties)) {
      const list = schema.type === 'array' || (schema.anyOf ?? []).some((option) => option.type === 'array');
      const setting = ofPipeline.find((testCase) => testCase.body[field] !== undefined);
      const base = setting ?? (list ? undefined : ofPipeline[0]);
      if (!base) continue;
      const current = base.body[field];
      for (const value of [...choicesOf(schema), ...boundsOf(schema)]) {
        const changed = Array.isArray(current) ? [value, ...current.slice(1)] : value;
        if (JSON.stringify(changed) === JSON.stringify(current)) continue;
        variants.push({
          ...base,
          name: `${base.name} with ${field} ${value}`,
          body: { ...base.body, [field]: changed },
        });
      }
    }
  }
  return variants;
}

interface SchemaNode {
  readonly type?: string;
  readonly enum?: readonly unknown[];
  readonly minimum?: number;
  readonly maximum?: number;
  readonly exclusiveMinimum?: number;
  readonly exclusiveMaximum?: number;
  readonly anyOf?: readonly SchemaNode[];
  readonly items?: SchemaNode;
  readonly properties?: Readonly<Record<string, SchemaNode>>;
}

/** The string values a field (or a list field's items) may take, where its schema lists them. */
function choicesOf(schema: SchemaNode): string[] {
  if (schema.type === 'string' && schema.enum)
    return schema.enum.filter((value) => typeof value === 'string');
  return [...(schema.anyOf ?? []), ...(schema.items ? [schema.items] : [])].flatMap(choicesOf);
}

/** A number field's (or a list field's items') lowest and highest accepted values. */
function boundsOf(schema: SchemaNode): number[] {
  if (schema.type === 'integer' || schema.type === 'number') {
    const step = schema.type === 'integer' ? 1 : 0.01;
    const round = (value: number) => Math.round(value * 100) / 100;
    const low =
      schema.minimum ??
      (schema.exclusiveMinimum === undefined ? undefined : round(schema.exclusiveMinimum + step));
    const high =
      schema.maximum ??
      (schema.exclusiveMaximum === undefined ? undefined : round(schema.exclusiveMaximum - step));
    return [low, high].filter((value): value is number => value !== undefined);
  }
  return [...(schema.anyOf ?? []), ...(schema.items ? [schema.items] : [])].flatMap(boundsOf);
}
