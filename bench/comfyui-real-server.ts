import { randomUUID } from 'node:crypto';
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
import { type FileServer, type LoopbackApi, serveFiles, startLoopbackApi } from '@imagegen/server/testing';
import sharp from 'sharp';
import { benchDatabase } from './bench-database.ts';

/**
 * `BENCH_COMFYUI_URL=http://HOST:PORT npm run --silent bench -- comfyui`: what the gateway adds to a
 * backlog on one real ComfyUI server, through the API and a worker as npm start runs them. Each of
 * BENCH_BACKLOGS backlogs (default 3) submits BENCH_TASKS tasks (default 8) at once to an idle
 * server, then reads each prompt's stamps from the server's own `/history` and each task's from
 * the database: the wall time from the first prompt's start to the last SUCCESS against the
 * prompts' own time, the idle gaps between prompts told apart by whose they are (the next prompt
 * sent to the server before the one before ended: the server's own; sent after: the gateway's), and the last prompt's
 * end to its task's SUCCESS in its parts (comfyui-fake's gateway-overhead.ts says how). After each
 * backlog, the same graphs go once more straight to the server, with no gateway, all at once
 * (`server_alone_*`): what the server's own pauses cost a backlog, so that what the gateway adds
 * is the difference.
 *
 * The task is BENCH_PIPELINE (default /sd/text2image/v1) with BENCH_BODY (JSON; default a 64 x 64
 * text2image of BENCH_STEPS steps, default 2), its model ids mapped by COMFYUI_CHECKPOINTS
 * (default `sd1.5=random-sd15.safetensors`, the real-server suite's). With BENCH_INPUT_SIZE=WxH each
 * task gets a picture of its own of that size in BENCH_INPUT_FIELD (default `input_image`), served
 * on loopback: a pipeline that takes a picture (`/upscaler/v1` with `{"type":"deblur"}` makes prompts
 * of about a second on a CPU server) can make the short prompts a backlog measurement wants, where
 * text2image samples at its family's native size; each picture differs, since ComfyUI answers a
 * prompt whose inputs it has seen from its cache without running it. One task runs first, unmeasured,
 * so no backlog loads the checkpoint; BENCH_PAUSE_SECONDS (default 22) come before each run. ComfyUI
 * collects garbage after a prompt once 10 s have passed since it last did, or when idle 10 s after
 * it last did: 22 s after a backlog, the last collection was at least 12 s ago, so every run meets
 * the collections at the same moments (after its first prompt, then every 10 s) and the gateway's
 * runs and the server's alone compare. The server's clock and this machine's must agree (the same machine, or NTP):
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
  const pauseMs = Number(env.BENCH_PAUSE_SECONDS ?? 22) * 1000;
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
  const inputs = env.BENCH_INPUT_SIZE
    ? await servePictures(env.BENCH_INPUT_SIZE, 1 + backlogs * tasks)
    : undefined;
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
      const picture = inputs && { [env.BENCH_INPUT_FIELD ?? 'input_image']: inputs.next() };
      const response = await fetch(`${api!.url}${pipeline}`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ ...body, ...picture }),
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
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
      const alone = await serverAloneBacklog(url, times);
      note(`the same graphs straight to the server: ${JSON.stringify(alone)}`);
      accounts.push({ ...account, alone });
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
      server_alone_overhead_percent: accounts.map((a) => a.alone.overhead_percent),
      server_alone_gaps_ms: accounts.map((a) => a.alone.gaps_ms),
    };
    await api.close();
    api = undefined;
    await engines.close();
    console.log(JSON.stringify(result));
    return result;
  } finally {
    await api?.close();
    await fake?.close();
    await inputs?.server.close();
    await pool.end();
    await db.cleanup();
  }
}

/** `count` pictures of `size` (WxH), each of its own colour, on a loopback server; `next` names the next unused one. */
async function servePictures(
  size: string,
  count: number,
): Promise<{ server: FileServer; next: () => string }> {
  const [width, height] = size.split('x').map(Number);
  if (!width || !height) throw new Error(`BENCH_INPUT_SIZE: expected WxH, got ${size}`);
  const files: Record<string, readonly [string, Buffer]> = {};
  for (let n = 0; n < count; n++) {
    const background = { r: (n * 37) % 256, g: (n * 91) % 256, b: (n * 53 + 17) % 256 };
    const png = await sharp({ create: { width, height, channels: 3, background } })
      .png()
      .toBuffer();
    files[`/input-${n}.png`] = ['image/png', png];
  }
  const server = await serveFiles(files);
  let served = 0;
  return { server, next: () => `${server.url}/input-${served++}.png` };
}

/**
 * The prompts of a backlog run again straight to the server, all queued at once with no gateway
 * (their graphs read back from `/history`, each saving under a new prefix): the idle time between
 * them is the server's alone. Each graph's inputs differ from the one before it, so none is
 * answered from ComfyUI's cache, which keeps the last prompt's outputs.
 */
async function serverAloneBacklog(
  url: string,
  prompts: readonly PromptTimes[],
): Promise<{ overhead_percent: number; gaps_ms: number[] }> {
  const base = url.endsWith('/') ? url : `${url}/`;
  const ran = [...prompts].sort((a, b) => a.startedAt - b.startedAt);
  const ids: string[] = [];
  for (const prompt of ran) {
    const entry = (await (await fetch(new URL(`history/${prompt.promptId}`, base))).json()) as Record<
      string,
      { prompt: [number, string, Record<string, { class_type: string; inputs: Record<string, unknown> }>] }
    >;
    const graph = entry[prompt.promptId]!.prompt[2];
    for (const node of Object.values(graph)) {
      if (typeof node.inputs.filename_prefix === 'string')
        node.inputs.filename_prefix = `bench-alone/${randomUUID()}`;
    }
    const response = await fetch(new URL('prompt', base), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: graph, client_id: 'bench-server-alone' }),
    });
    if (!response.ok) throw new Error(`POST /prompt: HTTP ${response.status} ${await response.text()}`);
    ids.push(((await response.json()) as { prompt_id: string }).prompt_id);
  }
  const times: PromptTimes[] = [];
  for (const id of ids) {
    for (;;) {
      const entry = (await (await fetch(new URL(`history/${id}`, base))).json()) as Record<
        string,
        { status?: { completed?: boolean; status_str?: string } }
      >;
      const status = entry[id]?.status;
      if (status?.status_str === 'error') throw new Error(`prompt ${id} failed on the server`);
      if (status?.completed) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    // Sent before any ran, and done at its end: every gap is the server's, the wall ends with the last prompt.
    const { startedAt, endedAt } = await historyStamps(url, id);
    times.push({
      promptId: id,
      startedAt,
      endedAt,
      submittedAt: 0,
      endSeenAt: endedAt,
      outputsAt: endedAt,
      succeededAt: endedAt,
    });
  }
  const account = backlogOverhead(times);
  return { overhead_percent: account.overhead_percent, gaps_ms: [...account.server_gaps_ms] };
}
