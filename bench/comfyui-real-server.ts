import { backlogOverhead, historyStamps, type PromptTimes, startFakeComfyUI } from '@imagegen/comfyui-fake';
import { createPool } from '@imagegen/db';
import {
  COMPILERS,
  createComfyClient,
  createComfyuiEngine,
  parseCheckpointSettings,
} from '@imagegen/engine-comfyui/engine';
import { createEngineRegistry } from '@imagegen/engines';
import { createOwner, migrate } from '@imagegen/server';
import { type LoopbackApi, startLoopbackApi } from '@imagegen/server/testing';
import { benchDatabase } from './bench-database.ts';

/**
 * `BENCH_COMFYUI_URL=http://HOST:PORT npm run --silent bench -- comfyui`: what the gateway adds to a
 * backlog on one real ComfyUI server, through the API and a worker as npm start runs them. Each of
 * BENCH_BACKLOGS backlogs (default 3) submits BENCH_TASKS tasks (default 8) at once to an idle
 * server, then reads each prompt's stamps from the server's own `/history` and each task's from
 * the database: the wall time from the first prompt's start to the last SUCCESS against the
 * prompts' own time, the idle gaps between prompts told apart by whose they are (the next prompt
 * sent to the server before the one before ended: the server's own; sent after: the gateway's), and the last prompt's
 * end to its task's SUCCESS in its parts (comfyui-fake's gateway-overhead.ts says how).
 *
 * The task is BENCH_PIPELINE (default /sd/text2image/v1) with BENCH_BODY (JSON; default a 64 x 64
 * text2image of BENCH_STEPS steps, default 2), its model ids mapped by COMFYUI_CHECKPOINTS
 * (default `sd1.5=random-sd15.safetensors`, the real-server suite's). One task runs first, unmeasured,
 * so no backlog loads the checkpoint; BENCH_PAUSE_SECONDS (default 12) separate the backlogs, so
 * each starts on a server that has been idle, as ComfyUI's own garbage collection runs at most
 * every 10 s. The server's clock and this machine's must agree (the same machine, or NTP):
 * `server_to_gateway_ms_min`, the quickest a prompt's end was seen here, would be negative if not.
 *
 * `BENCH_COMFYUI_URL=fake` runs the same against a fake server whose prompts take
 * BENCH_FAKE_STEP_MS per step (default 300) and which collects garbage for BENCH_FAKE_GC_MS
 * (default 0) at most every 10 s after a prompt, as ComfyUI's prompt worker does.
 */

const note = (line: string) => console.error(`[bench comfyui, real server] ${line}`);
const env = process.env;

export async function realServerOverhead(target: string): Promise<Record<string, unknown>> {
  const backlogs = Number(env.BENCH_BACKLOGS ?? 3);
  const tasks = Number(env.BENCH_TASKS ?? 8);
  const pauseMs = Number(env.BENCH_PAUSE_SECONDS ?? 12) * 1000;
  const pipeline = env.BENCH_PIPELINE ?? '/sd/text2image/v1';
  const body = env.BENCH_BODY
    ? (JSON.parse(env.BENCH_BODY) as Record<string, unknown>)
    : {
        prompt: 'a lighthouse at dawn',
        negative_prompt: '',
        width: 64,
        height: 64,
        num_inference_steps: Number(env.BENCH_STEPS ?? 2),
      };
  const fake =
    target === 'fake'
      ? await startFakeComfyUI({ stepDelayMs: Number(env.BENCH_FAKE_STEP_MS ?? 300) })
      : undefined;
  if (fake && Number(env.BENCH_FAKE_GC_MS ?? 0) > 0) {
    fake.faults.collectGarbage({ pauseMs: Number(env.BENCH_FAKE_GC_MS) });
  }
  const url = fake?.url ?? target;
  const db = await benchDatabase('bench_comfyui_real');
  const pool = createPool(db.url, { max: 8, applicationName: 'bench-comfyui-real' });
  let api: LoopbackApi | undefined;
  try {
    await migrate(pool);
    const { apiKey } = await createOwner(pool, { name: 'bench', plan: 'UNLIMITED' });
    const engine = createComfyuiEngine({
      servers: [createComfyClient({ url, name: 'server' })],
      compilers: COMPILERS,
      ...parseCheckpointSettings(env.COMFYUI_CHECKPOINTS ?? 'sd1.5=random-sd15.safetensors'),
    });
    const engines = createEngineRegistry([engine], { enabled: ['comfyui'], pinned: {} });
    // The worker as npm start runs it (its poll and retry defaults), not the tests' quicker ones.
    api = await startLoopbackApi({ pool, engines, worker: { pollMs: 1_000, retryBaseMs: 1_000 } });
    const headers = { 'API-Key': apiKey, 'content-type': 'application/json' };
    const submit = async () => {
      const response = await fetch(`${api!.url}${pipeline}`, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
      });
      if (response.status !== 200)
        throw new Error(`submit: HTTP ${response.status} ${await response.text()}`);
      return ((await response.json()) as { id: string }).id;
    };
    const settled = async (ids: string[]) => {
      for (;;) {
        const { rows } = await pool.query<{
          id: string;
          state: string;
          error: string | null;
          meta: Record<string, unknown> | null;
          finished_ms: number | null;
        }>(
          `SELECT id, state, error, result->'meta' AS meta, extract(epoch FROM finished_at) * 1000 AS finished_ms
           FROM tasks WHERE id = ANY($1::uuid[])`,
          [ids],
        );
        if (rows.every((row) => row.state === 'succeeded' || row.state === 'failed')) return rows;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    };

    note(`${url}: one task first, so no backlog loads the model`);
    const [warm] = await settled([await submit()]);
    if (warm!.state !== 'succeeded') throw new Error(`the first task failed: ${warm!.error}`);
    const accounts = [];
    for (let n = 0; n < backlogs; n++) {
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
      note(`backlog ${n + 1} of ${backlogs}: ${tasks} tasks`);
      const ids = [];
      for (let t = 0; t < tasks; t++) ids.push(await submit());
      const rows = await settled(ids);
      const failed = rows.filter((row) => row.state !== 'succeeded');
      if (failed.length > 0) throw new Error(`${failed.length} task(s) failed: ${failed[0]!.error}`);
      const times: PromptTimes[] = await Promise.all(
        rows.map(async (row) => {
          const meta = row.meta ?? {};
          const promptId = String(meta.comfyui_prompt_id);
          return {
            promptId,
            ...(await historyStamps(url, promptId)),
            submittedAt: Number(meta.comfyui_submitted_at),
            endSeenAt: Number(meta.comfyui_end_seen_at),
            outputsAt: Number(meta.comfyui_outputs_at),
            succeededAt: Number(row.finished_ms),
          };
        }),
      );
      const account = backlogOverhead(times);
      note(JSON.stringify(account));
      accounts.push(account);
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const result = {
      server: target === 'fake' ? 'fake' : url,
      backlogs,
      tasks_per_backlog: tasks,
      prompt_ms_median: median(accounts.map((a) => a.busy_ms / a.prompts)),
      overhead_percent: accounts.map((a) => a.overhead_percent),
      last_end_to_success_ms: accounts.map((a) => a.last_end_to_success_ms),
      last_end_to_seen_ms: accounts.map((a) => a.last_end_to_seen_ms),
      last_seen_to_outputs_ms: accounts.map((a) => a.last_seen_to_outputs_ms),
      last_outputs_to_success_ms: accounts.map((a) => a.last_outputs_to_success_ms),
      server_gaps_ms: accounts.map((a) => a.server_gaps_ms),
      gateway_gaps_ms: accounts.map((a) => a.gateway_gaps_ms),
      server_to_gateway_ms_min: Math.min(...accounts.map((a) => a.server_to_gateway_ms_min)),
    };
    await api.close();
    api = undefined;
    await engines.close();
    console.log(JSON.stringify(result));
    return result;
  } finally {
    await api?.close();
    await fake?.close();
    await pool.end();
    await db.cleanup();
  }
}
