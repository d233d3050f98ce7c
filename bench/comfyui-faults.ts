import { spawn } from 'node:child_process';
import { access, readFile } from 'node:fs/promises';
import { startFakeComfyUI } from '@imagegen/comfyui-fake';
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
 * A real ComfyUI killed mid-prompt (`kill -9`) with tasks queued, then started again, through the
 * API and a worker as npm start runs them; it counts what became of every task:
 *
 *   BENCH_COMFYUI_URL=http://127.0.0.1:8188 COMFYUI_PID_FILE=/opt/comfyui-cpu/comfyui.pid \
 *   COMFYUI_START=/path/to/start.sh npm run --silent bench -- comfyui-faults
 *
 * BENCH_TASKS tasks (default 6, text2image of BENCH_STEPS steps, default 2, at BENCH_SIZE pixels,
 * default 128) are submitted; once the server runs one of their prompts with another queued behind
 * it, the process in COMFYUI_PID_FILE is killed with SIGKILL (after checking it is ComfyUI's
 * main.py) and COMFYUI_START is run (it returns once the server answers). With BENCH_WITH_FAKE=1 a
 * fake server joins the pool as a second one, where the killed server's prompts go at once;
 * without it they wait for the server to come back. The last line counts: tasks succeeded and
 * failed, their attempts, how soon the death was known and the server taken back, and the prompts
 * each server completed (a task's prompt completed twice would show). COMFYUI_CHECKPOINTS maps the
 * model ids (default the real-server suite's `sd1.5=random-sd15.safetensors`).
 */

const note = (line: string) => console.error(`[bench comfyui-faults] ${line}`);
const env = process.env;

export default async function main(): Promise<Record<string, unknown>> {
  const url = env.BENCH_COMFYUI_URL;
  const pidFile = env.COMFYUI_PID_FILE;
  const start = env.COMFYUI_START;
  if (!url || !pidFile || !start) {
    throw new Error(
      'set BENCH_COMFYUI_URL, COMFYUI_PID_FILE and COMFYUI_START (see bench/comfyui-faults.ts)',
    );
  }
  const tasks = Number(env.BENCH_TASKS ?? 6);
  const size = Number(env.BENCH_SIZE ?? 128);
  const body = {
    prompt: 'a lighthouse at dawn',
    negative_prompt: '',
    width: size,
    height: size,
    num_inference_steps: Number(env.BENCH_STEPS ?? 2),
  };
  const settings = parseCheckpointSettings(env.COMFYUI_CHECKPOINTS ?? 'sd1.5=random-sd15.safetensors');
  // A fake second server has the checkpoints the settings map.
  const fake =
    env.BENCH_WITH_FAKE === '1'
      ? await startFakeComfyUI({
          stepDelayMs: 50,
          models: { checkpoints: Object.values(settings.checkpoints) },
        })
      : undefined;
  const db = await benchDatabase('bench_comfyui_faults');
  const pool = createPool(db.url, { max: 8, applicationName: 'bench-comfyui-faults' });
  const events: { at: number; line: string }[] = [];
  let api: LoopbackApi | undefined;
  try {
    await migrate(pool);
    const { apiKey } = await createOwner(pool, { name: 'bench', plan: 'UNLIMITED' });
    const engine = createComfyuiEngine({
      servers: [
        createComfyClient({ url, name: 'real' }),
        ...(fake ? [createComfyClient({ url: fake.url, name: 'fake' })] : []),
      ],
      compilers: COMPILERS,
      ...settings,
      // As npm start warms up a server that comes back (COMFYUI_WARMUP's default for these settings).
      warmup: ['sd1.5'],
      pool: {
        log: (line) => {
          events.push({ at: Date.now(), line });
          note(line);
        },
      },
    });
    const engines = createEngineRegistry([engine], { enabled: ['comfyui'], pinned: {} });
    api = await startLoopbackApi({ pool, engines, worker: { pollMs: 1_000, retryBaseMs: 1_000 } });
    const headers = { 'API-Key': apiKey, 'content-type': 'application/json' };
    const ids: string[] = [];
    for (let n = 0; n < tasks; n++) {
      const response = await fetch(`${api.url}/sd/text2image/v1`, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
      });
      if (response.status !== 200)
        throw new Error(`submit: HTTP ${response.status} ${await response.text()}`);
      ids.push(((await response.json()) as { id: string }).id);
    }

    note('waiting until the real server runs a prompt with another queued behind it');
    for (;;) {
      const queue = (await (await fetch(`${url}/queue`)).json()) as {
        queue_running: unknown[];
        queue_pending: unknown[];
      };
      if (queue.queue_running.length > 0 && queue.queue_pending.length > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const pid = Number((await readFile(pidFile, 'utf8')).trim());
    const command = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (!command.includes('main.py'))
      throw new Error(`pid ${pid} (from ${pidFile}) is not ComfyUI's main.py`);
    const killedAt = Date.now();
    process.kill(pid, 'SIGKILL');
    // A killed process takes a moment to go (it frees gigabytes of models), and stays a zombie until
    // its parent reaps it: until then a start script that checks its pid file (`kill -0`) finds the
    // server still running and starts nothing. Waited for up to a minute.
    while ((await exists(`/proc/${pid}`)) && Date.now() - killedAt < 60_000) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    note(`killed ComfyUI (pid ${pid}, gone after ${Date.now() - killedAt} ms); starting it again: ${start}`);
    const restart = spawn('sh', ['-c', start], { stdio: ['ignore', 'inherit', 'inherit'] });
    const restarted = new Promise<number>((resolve) => restart.on('exit', () => resolve(Date.now())));

    const settled = async () => {
      for (;;) {
        const { rows } = await pool.query<{
          id: string;
          state: string;
          attempts: number;
          error: string | null;
          server: string | null;
          prompt: string | null;
        }>(
          `SELECT id, state, attempts, error, result->'meta'->>'comfyui_server' AS server,
                  result->'meta'->>'comfyui_prompt_id' AS prompt
           FROM tasks WHERE id = ANY($1::uuid[])`,
          [ids],
        );
        if (rows.every((row) => row.state === 'succeeded' || row.state === 'failed')) return rows;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    };
    const rows = await settled();
    const upAt = await restarted;
    const first = (words: string) =>
      events.find((event) => event.at >= killedAt && event.line.includes(words));
    // What the restarted server completed: only prompts sent after it came back.
    const history = (await (await fetch(`${url}/history`)).json()) as Record<
      string,
      { status?: { status_str?: string } }
    >;
    const completedThere = Object.entries(history)
      .filter(([, entry]) => entry.status?.status_str === 'success')
      .map(([id]) => id);
    const prompts = rows.map((row) => row.prompt).filter((id): id is string => id !== null);
    const result = {
      tasks,
      with_fake_second_server: Boolean(fake),
      succeeded: rows.filter((row) => row.state === 'succeeded').length,
      failed: rows.filter((row) => row.state === 'failed').length,
      failures: rows.filter((row) => row.error).map((row) => row.error),
      attempts: rows.map((row) => row.attempts),
      succeeded_on: Object.fromEntries(
        [...new Set(rows.map((row) => row.server))].map((server) => [
          server,
          rows.filter((row) => row.server === server).length,
        ]),
      ),
      distinct_prompts_of_succeeded_tasks: new Set(prompts).size,
      prompts_completed_on_restarted_server: completedThere.length,
      of_them_tasks_results: completedThere.filter((id) => prompts.includes(id)).length,
      down_known_after_ms: first('is down') ? first('is down')!.at - killedAt : null,
      restart_took_ms: upAt - killedAt,
      up_again_after_ms: first('is up again') ? first('is up again')!.at - killedAt : null,
      warm_up_lines: events.filter((event) => event.line.includes('warm')).map((event) => event.line),
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

const exists = (file: string) =>
  access(file).then(
    () => true,
    () => false,
  );
