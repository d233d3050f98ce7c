import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { createInterface } from 'node:readline';
import { createPool } from '@imagegen/db';
import { COMPILERS, createComfyClient, createComfyuiEngine } from '@imagegen/engine-comfyui/engine';
import { createEngineRegistry } from '@imagegen/engines';
import { createOwner, migrate } from '@imagegen/server';
import { type LoopbackApi, startLoopbackApi } from '@imagegen/server/testing';
import { benchDatabase } from './bench-database.ts';
import { spawnServer, stopServer } from './child-server.ts';
import { realServerOverhead } from './comfyui-real-server.ts';
import { cpuPerRequest, postgresPids, sampleCpu } from './cpu-time.ts';
import { percentile } from './percentile.ts';

/**
 * The comfyui engine's own cost, against fake ComfyUI servers that run every prompt in no time:
 * what the gateway adds to a task on each side of ComfyUI, how long a busy server waits between
 * two prompts of a backlog, and whether a backlog of 1,000 tasks keeps 4 servers busy without
 * flooding any (never more than one running plus one queued prompt of ours) or running a task
 * twice. With prompts that take no time the gateway is the bottleneck, so the idle gap is its
 * turnaround per server; a second backlog, with prompts that take time as on a GPU, shows the
 * queued prompt starting as the one before it ends.
 *
 * The fakes run in a process of their own (bench/comfyui-fakes-server.ts), as ComfyUI runs on
 * machines of its own: this process is the gateway (API, worker, engine), and its CPU per task is
 * the gateway's. A backlog is queued before the worker starts, so it is a backlog the servers
 * work through, not a race with the submissions.
 *
 * With BENCH_COMFYUI_URL it measures instead what the gateway adds to backlogs on one real server
 * (comfyui-real-server.ts).
 */

const note = (line: string) => console.error(`[bench comfyui] ${line}`);
const SERVERS = Number(process.env.BENCH_SERVERS ?? 4);
const BACKLOG = Number(process.env.BENCH_TASKS ?? 1000);
const SINGLES = Number(process.env.BENCH_RUNS ?? 40);
/** The paced backlog: prompts that take time, as on a GPU. */
const PACED = Number(process.env.BENCH_PACED_TASKS ?? 200);
const PACED_STEP_MS = 50;
const PIPELINE = '/sd/text2image/v1';
const BODY = {
  prompt: 'a lighthouse at dawn',
  negative_prompt: 'blurry',
  width: 256,
  height: 256,
  samples: 1,
  num_inference_steps: 4,
};
const CHECKPOINTS = { 'sd1.5': 'random-sd15.safetensors' };
const round = (ms: number) => Math.round(ms * 10) / 10;

/**
 * With BENCH_PROFILE=FILE, a CPU profile of this process (the gateway) while it works through the
 * queued backlog, for Chrome's DevTools: where the gateway's time per task goes. Answers the
 * function that ends it, or undefined when no profile was asked for.
 */
async function profileGateway(): Promise<(() => Promise<void>) | undefined> {
  const file = process.env.BENCH_PROFILE;
  if (!file) return undefined;
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return async () => {
    const { profile } = await session.post('Profiler.stop');
    await writeFile(file, JSON.stringify(profile));
    session.disconnect();
    note(`gateway CPU profile of the backlog written to ${file}`);
  };
}

interface ExecutionReport {
  /** Per fake, every prompt it ran, with times on this process's clock. */
  executions: { promptId: string; startedAt: number; endedAt?: number }[][];
  maxQueue: number[];
}

export default async function main(): Promise<Record<string, unknown>> {
  // Against a real server (or a fake one paced as a real one): comfyui-real-server.ts.
  if (process.env.BENCH_COMFYUI_URL) return realServerOverhead(process.env.BENCH_COMFYUI_URL);
  const db = await benchDatabase('bench_comfyui');
  const pool = createPool(db.url, { max: 16, applicationName: 'bench-comfyui' });
  const { child: fakesProcess, firstLine } = await spawnServer(
    'comfyui-fakes-server.ts',
    [String(SERVERS)],
    'pipe',
  );
  let api: LoopbackApi | undefined;
  try {
    const fakes = JSON.parse(firstLine) as { urls: string[]; names: string[] };
    const replies = createInterface({ input: fakesProcess.stdout! })[Symbol.asyncIterator]();
    const ask = async <T>(command: unknown): Promise<T> => {
      fakesProcess.stdin!.write(`${JSON.stringify(command)}\n`);
      const reply = await replies.next();
      if (reply.done) throw new Error('the fake ComfyUI servers exited');
      return JSON.parse(reply.value) as T;
    };
    /**
     * The fakes' clock minus ours: their clock read during our question is taken to be at the
     * midpoint of its round trip, as NTP does; the quickest of a few round trips is the best guess.
     */
    let offset = 0;
    let quickest = Number.POSITIVE_INFINITY;
    for (let n = 0; n < 10; n++) {
      const asked = performance.now();
      const { now } = await ask<{ now: number }>({ op: 'clock' });
      const answered = performance.now();
      if (answered - asked < quickest) {
        quickest = answered - asked;
        offset = now - (asked + answered) / 2;
      }
    }
    /** What the fakes ran, with the times on this process's clock. */
    const report = async (): Promise<ExecutionReport> => {
      const reply = await ask<ExecutionReport>({ op: 'report' });
      const ours = (ms: number | undefined) => (ms === undefined ? undefined : ms - offset);
      return {
        maxQueue: reply.maxQueue,
        executions: reply.executions.map((records) =>
          records.map((record) => ({
            promptId: record.promptId,
            startedAt: ours(record.startedAt)!,
            endedAt: ours(record.endedAt),
          })),
        ),
      };
    };

    await migrate(pool);
    const { apiKey } = await createOwner(pool, { name: 'bench', plan: 'UNLIMITED' });
    const engine = createComfyuiEngine({
      servers: fakes.urls.map((url, n) => createComfyClient({ url, name: fakes.names[n]! })),
      compilers: COMPILERS,
      checkpoints: CHECKPOINTS,
    });
    const engines = createEngineRegistry([engine], { enabled: ['comfyui'], pinned: {} });
    // No worker yet: the first backlog is queued whole before one starts.
    api = await startLoopbackApi({ pool, engines, withWorker: false });
    const { url } = api;
    const headers = { 'API-Key': apiKey, 'content-type': 'application/json' };
    const submit = async () => {
      const response = await fetch(`${url}${PIPELINE}`, {
        method: 'POST',
        headers,
        body: JSON.stringify(BODY),
      });
      if (response.status !== 200)
        throw new Error(`submit: HTTP ${response.status} ${await response.text()}`);
      return ((await response.json()) as { id: string }).id;
    };
    const status = async (id: string) => {
      const response = await fetch(`${url}${PIPELINE}/status/${id}`, { headers });
      return ((await response.json()) as { status: string }).status;
    };

    // The gateway (API, worker, engine) is this process; the fakes and PostgreSQL are apart.
    const cpuGroups = {
      gateway: () => ['self' as const],
      fake_comfyui: () => [fakesProcess.pid!],
      postgres: () => (db.pgDataDir ? postgresPids(db.pgDataDir) : []),
    };
    /**
     * Submits `count` tasks (before the worker starts when `startWorker` is given) and waits for
     * them all: what each fake saw meanwhile, measured from the moment the worker may run them.
     */
    const backlog = async (count: number, startWorker?: () => void) => {
      const before = (await report()).executions.map((records) => records.length);
      let cpuBefore = sampleCpu(cpuGroups);
      let started = performance.now();
      const ids: string[] = [];
      for (let n = 0; n < count; n += 50) {
        ids.push(...(await Promise.all(Array.from({ length: Math.min(50, count - n) }, submit))));
      }
      const profile = startWorker ? await profileGateway() : undefined;
      if (startWorker) {
        cpuBefore = sampleCpu(cpuGroups);
        started = performance.now();
        startWorker();
      }
      const rows = async () =>
        (
          await pool.query<{ state: string; attempts: number }>(
            'SELECT state, attempts FROM tasks WHERE id = ANY($1::uuid[])',
            [ids],
          )
        ).rows;
      let finished = await rows();
      while (!finished.every((row) => row.state === 'succeeded' || row.state === 'failed')) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        finished = await rows();
      }
      const seconds = (performance.now() - started) / 1000;
      await profile?.();
      const cpu = cpuPerRequest(cpuBefore, sampleCpu(cpuGroups), count);
      const after = await report();
      const perServer = after.executions.map((records, n) => records.slice(before[n]));
      // A server's idle gap: from the end of one of its prompts to the start of its next.
      const gaps = perServer.flatMap((records) => {
        const sorted = [...records].sort((a, b) => a.startedAt - b.startedAt);
        return sorted.slice(1).map((record, n) => Math.max(0, record.startedAt - sorted[n]!.endedAt!));
      });
      const prompts = perServer.flat();
      return {
        tasks: count,
        seconds: round(seconds),
        tasks_per_second: round(count / seconds),
        cpu_ms_per_task:
          cpu && Object.fromEntries(Object.entries(cpu).map(([k, us]) => [k, round(us / 1000)])),
        succeeded: finished.filter((row) => row.state === 'succeeded').length,
        prompts_per_server: perServer.map((records) => records.length),
        idle_gap_p50_ms: round(percentile(gaps, 50)),
        idle_gap_p90_ms: round(percentile(gaps, 90)),
        max_prompts_held_per_server: after.maxQueue,
        prompts_run: prompts.length,
        distinct_prompts: new Set(prompts.map((record) => record.promptId)).size,
        tasks_with_more_than_one_attempt: finished.filter((row) => row.attempts > 1).length,
      };
    };

    note(`backlog: ${BACKLOG} tasks queued, then run on ${SERVERS} servers running prompts in no time`);
    const zero = await backlog(BACKLOG, () => api!.addWorker({ pollMs: 1_000 }));

    note(`gateway overhead: ${SINGLES} tasks one at a time`);
    const toPrompt: number[] = [];
    const toVisible: number[] = [];
    for (let n = 0; n < SINGLES + 3; n++) {
      const before = (await report()).executions.map((records) => records.length);
      const submitted = performance.now();
      const id = await submit();
      let state = await status(id);
      while (state === 'PENDING') state = await status(id);
      const seen = performance.now();
      if (state !== 'SUCCESS') throw new Error(`task ${id} ended ${state}`);
      // The one prompt run since: on whichever server it went to.
      const record = (await report()).executions.flatMap((records, server) =>
        records.slice(before[server]),
      )[0];
      if (!record?.endedAt) throw new Error(`task ${id}: no finished prompt on the fakes`);
      // The first tasks warm up connections, statements and the JIT.
      if (n < 3) continue;
      toPrompt.push(record.startedAt - submitted);
      toVisible.push(seen - record.endedAt);
    }

    // The same backlog where the servers, not the gateway, are the bottleneck: each prompt takes
    // PACED_STEP_MS per step, as a GPU would. A queued prompt should then start as the one before ends.
    note(
      `backlog: ${PACED} tasks on ${SERVERS} servers taking ${PACED_STEP_MS * BODY.num_inference_steps} ms a prompt`,
    );
    await ask({ op: 'slow', ms: PACED_STEP_MS });
    const paced = await backlog(PACED);
    const prefixed = (prefix: string, figures: Record<string, unknown>) =>
      Object.fromEntries(Object.entries(figures).map(([key, value]) => [`${prefix}_${key}`, value]));
    const result = {
      servers: SERVERS,
      gateway_submit_to_comfyui_prompt_p50_ms: round(percentile(toPrompt, 50)),
      gateway_submit_to_comfyui_prompt_p99_ms: round(percentile(toPrompt, 99)),
      gateway_comfyui_done_to_success_visible_p50_ms: round(percentile(toVisible, 50)),
      gateway_comfyui_done_to_success_visible_p99_ms: round(percentile(toVisible, 99)),
      ...prefixed('backlog', zero),
      ...prefixed('paced_backlog', { prompt_ms: PACED_STEP_MS * BODY.num_inference_steps, ...paced }),
      target_idle_gap_p50_within_20ms: zero.idle_gap_p50_ms <= 20,
      target_every_server_busy: zero.prompts_per_server.every((count) => count > 0),
      target_none_flooded: paced.max_prompts_held_per_server.every((held) => held <= 2),
      target_no_task_run_twice:
        zero.prompts_run === BACKLOG &&
        zero.distinct_prompts === BACKLOG &&
        zero.tasks_with_more_than_one_attempt === 0 &&
        zero.succeeded === BACKLOG,
    };
    await api.close();
    api = undefined;
    await engines.close();
    console.log(JSON.stringify(result));
    return result;
  } finally {
    await api?.close();
    await stopServer(fakesProcess);
    await pool.end();
    await db.cleanup();
  }
}
