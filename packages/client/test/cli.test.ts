import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { signWebhook } from '@imagegen/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type ImagegenClient } from '../src/index.ts';
import { imagegen } from './support/imagegen-command.ts';
import { startTestApi, type TestApi } from './support/test-api.ts';

/**
 * The `imagegen` command against the real API (sandbox engine, 1 s of simulated work per task),
 * run as a child process: piped, and in a pseudo terminal. Each exit code the help documents is
 * reached here: 0, 1 (the task failed), 2 (bad input), 3 (timeout), 4 (the key refused), 130.
 */

let api: TestApi;
let client: ImagegenClient;
let dir: string;
let env: Record<string, string>;
const PNG = [0x89, 0x50, 0x4e, 0x47];
const small = ['--negative-prompt', '', '--width', '64', '--height', '64'];

beforeAll(async () => {
  api = await startTestApi({ delayMs: 1000 });
  client = createClient({ apiKey: api.key, baseUrl: api.url });
  dir = await mkdtemp(path.join(tmpdir(), 'imagegen-cli-'));
  // XDG_CONFIG_HOME: an empty folder, so no config file of the machine's user is read.
  env = { IMAGEGEN_API_KEY: api.key, IMAGEGEN_BASE_URL: api.url, XDG_CONFIG_HOME: dir };
});

afterAll(async () => {
  await api?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('imagegen run', () => {
  it('piped: saves the outputs, prints their files, and shows progress as plain lines', async () => {
    const out = path.join(dir, 'out');
    const result = await imagegen(
      ['run', 'sd/text2image', '--prompt', 'a lighthouse', ...small, '--samples', '2', '--out', out],
      { env },
    );
    expect(result.code).toBe(0);
    // The sandbox drew them: stdout stays the files, stderr says they are placeholders.
    expect(result.stderr.match(/^imagegen:.*$/gm)).toEqual([
      'imagegen: placeholders: the sandbox engine answered this task with labelled placeholder images, ' +
        'not real ones; a server with COMFYUI_URLS set draws real images',
    ]);
    const files = result.stdout.trim().split('\n');
    expect(files).toHaveLength(2);
    for (const file of files) {
      expect(path.dirname(file)).toBe(out);
      expect([...(await readFile(file)).subarray(0, 4)]).toEqual(PNG);
    }
    expect(result.stderr).toMatch(/^sd\/text2image [0-9a-f]{8}: running 50%/m);
    expect(result.stderr).not.toContain('\r');
    expect(result.stderr).not.toContain('\u001b');
  });

  it("says each of the task's notes on stderr: a prompt used as given where no language model is set up", async () => {
    const result = await imagegen(
      [
        'run',
        'generate/v3',
        '--prompt',
        'a lighthouse',
        '--enhance-prompt',
        '--width',
        '64',
        '--height',
        '64',
        '--samples',
        '1',
      ],
      { env },
    );
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(
      'imagegen: note: enhance_prompt: no language model is configured on this deployment to rewrite prompts (PROMPT_ENHANCER_URL), so the prompt was used as given\n',
    );
  });

  it('says each preview that arrived: a line when piped, a count on the bar in a terminal', async () => {
    const previewing = await startTestApi({ delayMs: 1500, previews: true });
    try {
      const args = ['run', 'sd/text2image', '--prompt', 'a lighthouse', ...small, '--samples', '3'];
      const local = { ...env, IMAGEGEN_API_KEY: previewing.key, IMAGEGEN_BASE_URL: previewing.url };
      const piped = await imagegen(args, { env: local });
      expect(piped.code).toBe(0);
      expect(piped.stderr).toMatch(/^sd\/text2image [0-9a-f]{8}: preview 1 received \(\d+ B JPEG\)$/m);
      const terminal = await imagegen(args, { env: local, tty: true });
      expect(terminal.code).toBe(0);
      const redraws = terminal.stdout.split('\r\u001b[2K');
      expect(redraws.some((line) => /^sd\/text2image [0-9a-f]{8} \[[█░]+\] .*, 1 preview$/.test(line))).toBe(
        true,
      );
    } finally {
      await previewing.close();
    }
  });

  it('in a terminal: draws a progress bar in place, then prints the output links', async () => {
    const result = await imagegen(
      ['run', 'sd/text2image', '--prompt', 'a lighthouse', ...small, '--samples', '2'],
      {
        env,
        tty: true,
      },
    );
    expect(result.code).toBe(0);
    const redraws = result.stdout.split('\r\u001b[2K');
    expect(redraws.some((line) => /^sd\/text2image [0-9a-f]{8} \[█+░+\] running 50%/.test(line))).toBe(true);
    expect(result.stdout).toMatch(
      new RegExp(`${api.url}/files/\\S+\\.png\\r?\\n${api.url}/files/\\S+\\.png`),
    );
  });

  it('--json prints the final status as one JSON object, and uploads a local file given for an image', async () => {
    await writeFile(path.join(dir, 'photo.png'), api.photo);
    const result = await imagegen(
      ['run', 'sd/image2image', '--prompt', 'a watercolour', ...small, '--init-image', 'photo.png', '--json'],
      { env, cwd: dir },
    );
    expect(result.code).toBe(0);
    const status = JSON.parse(result.stdout) as { id: string; status: string; download_urls: string[] };
    expect(status.status).toBe('SUCCESS');
    expect(status.download_urls).toHaveLength(1);
    expect(status).toMatchObject({ engine: 'sandbox', placeholder: true });
    const [task] = (await client.tasks({ limit: 1 })).tasks;
    expect(task?.id).toBe(status.id);
  });

  it('exits 2 on a value the API refuses, naming the flag', async () => {
    const result = await imagegen(['run', 'sd/text2image', '--prompt', 'x', ...small, '--samples', '9'], {
      env,
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--samples: ensure this value is less than or equal to 4');
  });

  it('--cancel-after sends the deadline; a duration the API refuses exits 2, naming the flag', async () => {
    const refused = await imagegen(
      ['run', 'sd/text2image', '--prompt', 'x', ...small, '--cancel-after', '5x'],
      {
        env,
      },
    );
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--cancel-after: Cancel-After must be a duration from 1s to 24h');
    const queued = await imagegen(
      ['run', 'sd/text2image', '--prompt', 'x', ...small, '--cancel-after', '2m30s', '--no-wait'],
      { env },
    );
    expect(queued.code).toBe(0);
    const { rows } = await api.db.pool.query('SELECT cancel_after FROM tasks WHERE id = $1', [
      queued.stdout.trim(),
    ]);
    expect(rows).toEqual([{ cancel_after: '2m30s' }]);
  });

  it('exits 2 on an unknown flag, a value of the wrong type, a missing file or pipeline', async () => {
    const typo = await imagegen(['run', 'sd/text2image', '--prompt', 'x', '--sample', '2'], { env });
    expect([typo.code, typo.stderr]).toEqual([
      2,
      'imagegen: unknown flag --sample; did you mean --samples?\n',
    ]);
    const word = await imagegen(['run', 'sd/text2image', '--prompt', 'x', '--samples', 'two'], { env });
    expect([word.code, word.stderr]).toEqual([2, 'imagegen: --samples takes a whole number, not "two"\n']);
    const file = await imagegen(['run', 'sd/image2image', '--prompt', 'x', '--init-image', 'nope.png'], {
      env,
    });
    expect(file.code).toBe(2);
    expect(file.stderr).toContain('--init-image: nope.png is neither an http(s) URL nor a file');
    const pipeline = await imagegen(['run', 'sd/text2imag', '--prompt', 'x'], { env });
    expect(pipeline.code).toBe(2);
    expect(pipeline.stderr).toContain('no pipeline named sd/text2imag');
  });

  it('exits 1 when the task fails, with its error', async () => {
    const result = await imagegen(
      ['run', 'sd/image2image', '--prompt', 'x', ...small, '--init-image', `${api.imagesUrl}/missing.png`],
      { env },
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/imagegen: task \S+ failed: .*init_image/);
  });

  it('exits 3 at the timeout; the task goes on, or is cancelled with --cancel-on-timeout', async () => {
    const left = await imagegen(['run', 'sd/text2image', '--prompt', 'x', ...small, '--timeout', '0.3'], {
      env,
    });
    expect(left.code).toBe(3);
    expect(left.stderr).toMatch(
      /did not end within 0.3 s; it goes on: `imagegen status sd\/text2image \S+ --wait`/,
    );
    const id = /status sd\/text2image (\S+) --wait/.exec(left.stderr)![1]!;
    const waited = await imagegen(['status', 'sd/text2image', id, '--wait', '--json'], { env });
    expect(waited.code).toBe(0);
    expect(JSON.parse(waited.stdout)).toMatchObject({ id, status: 'SUCCESS' });

    const cancelled = await imagegen(
      ['run', 'sd/text2image', '--prompt', 'x', ...small, '--timeout', '0.3', '--cancel-on-timeout'],
      { env },
    );
    expect(cancelled.code).toBe(3);
    expect(cancelled.stderr).toContain('it was cancelled');
    expect((await client.tasks({ limit: 1 })).tasks[0]?.state).toBe('cancelled');
  });

  it('exits 4 when the API refuses the key', async () => {
    const result = await imagegen(['run', 'sd/text2image', '--prompt', 'x', ...small], {
      env: { ...env, IMAGEGEN_API_KEY: 'not-a-key' },
    });
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('HTTP 401');
  });

  it('exits 130 on Ctrl-C, cancelling the task', async () => {
    const result = await imagegen(['run', 'sd/text2image', '--prompt', 'x', ...small, '--samples', '4'], {
      env,
      onStderr: (text, child) => {
        if (text.includes('running')) child.kill('SIGINT');
      },
    });
    expect(result.code).toBe(130);
    expect(result.stderr).toMatch(/interrupted; task \S+ was cancelled/);
    expect((await client.tasks({ limit: 1 })).tasks[0]?.state).toBe('cancelled');
  });

  it('reads the key and the address from the config file', async () => {
    const config = path.join(dir, 'config.json');
    await writeFile(config, JSON.stringify({ apiKey: api.key, baseUrl: api.url }));
    const result = await imagegen(['run', 'sd/text2image', '--prompt', 'x', ...small, '--no-wait'], {
      env: { IMAGEGEN_CONFIG: config },
    });
    expect(result.code).toBe(0);
    expect((await client.tasks({ limit: 1 })).tasks[0]?.id).toBe(result.stdout.trim());
  });
});

describe('imagegen status, cancel, tasks, models', () => {
  it('status reads a task by pipeline and id, or by its status path; cancel of an ended task exits 2', async () => {
    const submitted = await imagegen(['run', 'sd/text2image', '--prompt', 'x', ...small, '--no-wait'], {
      env,
    });
    const id = submitted.stdout.trim();
    await client.wait('/sd/text2image/v1', id);
    const byName = await imagegen(['status', 'sd/text2image', id], { env });
    expect(byName.code).toBe(0);
    expect(byName.stdout).toMatch(/^SUCCESS\nhttp:\S+\.png\n$/);
    const byPath = await imagegen(['status', `/sd/text2image/v1/status/${id}`, '--json'], { env });
    expect(JSON.parse(byPath.stdout)).toMatchObject({ status: 'SUCCESS' });
    const cancel = await imagegen(['cancel', 'sd/text2image', id], { env });
    expect(cancel.code).toBe(2);
    expect(cancel.stderr).toContain('HTTP 409');
  });

  it('cancel ends a queued task', async () => {
    // An API without a worker: the task stays queued until it is cancelled.
    const idle = await startTestApi({ worker: false });
    try {
      const queued = createClient({ apiKey: idle.key, baseUrl: idle.url });
      const { id } = await queued.submit('/sd/text2image/v1', { prompt: 'x', negative_prompt: '' });
      const result = await imagegen(['cancel', 'sd/text2image', id, '--json'], {
        env: { ...env, IMAGEGEN_API_KEY: idle.key, IMAGEGEN_BASE_URL: idle.url },
      });
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout)).toEqual({ status: 'FAILURE', error: 'cancelled by the caller' });
      expect((await queued.tasks()).tasks[0]?.state).toBe('cancelled');
    } finally {
      await idle.close();
    }
  });

  it("tasks lists tasks as columns or JSON lines, filtered by the contract's query flags", async () => {
    const batch = `cli-${Date.now()}`;
    for (const prompt of ['a', 'b', 'c']) {
      const { id } = await client.submit('/sd/text2image/v1', {
        prompt,
        negative_prompt: '',
        batch_id: batch,
      });
      await client.wait('/sd/text2image/v1', id);
    }
    const table = await imagegen(
      ['tasks', '--batch-id', batch, '--pipeline', 'sd/text2image', '--limit', '2'],
      {
        env,
      },
    );
    expect(table.code).toBe(0);
    const lines = table.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^ID\s+PIPELINE\s+STATE\s+ENGINE\s+CREATED\s+FINISHED$/);
    expect(lines.slice(1)).toHaveLength(2);
    for (const line of lines.slice(1)) {
      expect(line).toMatch(
        /^\S+\s+\/sd\/text2image\/v1\s+succeeded\s+sandbox \(placeholder\)\s+\S+Z\s+\S+Z$/,
      );
    }
    expect(table.stderr).toMatch(
      new RegExp(
        `^more: imagegen tasks --batch-id ${batch} --pipeline sd/text2image --limit 2 --cursor \\S+\\n$`,
      ),
    );
    const json = await imagegen(['tasks', '--batch-id', batch, '--all', '--json'], { env });
    const tasks = json.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { pipeline: string });
    expect(tasks.map((task) => task.pipeline)).toEqual(Array(3).fill('/sd/text2image/v1'));
    const wrong = await imagegen(['tasks', '--status', 'done'], { env });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('--status: value is not a valid enumeration member');
  });

  it('tasks: the more line keeps every filter, and following it lists the same pipeline only', async () => {
    const batch = `more ${Date.now()}`;
    // Newest first: superresolution, text2image, superresolution, text2image. A second page that
    // dropped the filters would start with a text2image task.
    const superresolution = {
      model_name: 'RealESRGAN_x4plus',
      init_image: `${api.imagesUrl}/photo.png`,
      scale_factor: 2,
      tile: 128,
      batch_id: batch,
    } as const;
    for (let n = 0; n < 2; n++) {
      await client.submit('/sd/text2image/v1', { prompt: 'x', negative_prompt: '', batch_id: batch });
      await client.submit('/superresolution/v1', superresolution);
    }
    const first = await imagegen(
      ['tasks', '--pipeline', 'superresolution', '--batch-id', batch, '--limit', '1', '--json'],
      { env },
    );
    expect(first.code).toBe(0);
    const more = /^more: (.+)\n$/.exec(first.stderr)?.[1];
    expect(more).toMatch(
      new RegExp(
        `^imagegen tasks --pipeline superresolution --batch-id '${batch}' --limit 1 --json --cursor \\S+$`,
      ),
    );
    // The line as a shell would split it (the batch id is quoted: it holds a space).
    const words = [...more!.matchAll(/'([^']*)'|(\S+)/g)].map((match) => match[1] ?? match[2]!);
    const second = await imagegen(words.slice(1), { env });
    expect(second.code).toBe(0);
    const pipelines = [first.stdout, second.stdout].map(
      (out) => (JSON.parse(out) as { pipeline: string }).pipeline,
    );
    expect(pipelines).toEqual(['/superresolution/v1', '/superresolution/v1']);
    expect(second.stderr).toBe('');
  });

  it('tasks and models say so in one line when there is nothing to list; --json prints nothing', async () => {
    const none = await imagegen(['tasks', '--batch-id', `none-${Date.now()}`, '--status', 'running'], {
      env,
    });
    expect([none.code, none.stdout, none.stderr]).toEqual([
      0,
      expect.stringMatching(/^No tasks match --status running --batch-id none-\d+\.\n$/),
      '',
    ]);
    const models = await imagegen(['models'], { env });
    expect([models.code, models.stdout, models.stderr]).toEqual([
      0,
      'No models yet: load one with /load_model/v1 or train one with /train_model/v1.\n',
      '',
    ]);
    const json = await imagegen(['models', '--json'], { env });
    expect([json.code, json.stdout]).toEqual([0, '']);
  });
});

describe('imagegen help', () => {
  it('answers `help` and `help COMMAND` as `--help` and `COMMAND --help`, exit 0', async () => {
    const [help, dashHelp, helpTasks, tasksHelp] = await Promise.all(
      [['help'], ['--help'], ['help', 'tasks'], ['tasks', '--help']].map((args) => imagegen(args, { env })),
    );
    expect(help).toEqual({ code: 0, stdout: expect.stringContaining('imagegen help [command]'), stderr: '' });
    expect(dashHelp).toEqual(help);
    expect(helpTasks).toEqual({
      code: 0,
      stdout: expect.stringMatching(/^Usage: imagegen tasks /),
      stderr: '',
    });
    expect(tasksHelp).toEqual(helpTasks);
  });
});

describe('imagegen webhook verify', () => {
  it('exits 0 and prints the body for a genuine delivery, 1 for a tampered one', async () => {
    const secret = (await client.get('/webhook_secret/v1')).secret;
    const body = JSON.stringify({ status: 'SUCCESS', download_urls: [] });
    const headers = signWebhook(secret, 'msg_cli', new Date(), body);
    const args = [
      'webhook',
      'verify',
      '--secret',
      secret,
      '--id',
      headers['webhook-id'],
      '--timestamp',
      headers['webhook-timestamp'],
      '--signature',
      headers['webhook-signature'],
    ];
    const genuine = await imagegen(args, { stdin: body });
    expect([genuine.code, genuine.stdout]).toEqual([0, `${body}\n`]);
    const tampered = await imagegen(args, { stdin: body.replace('SUCCESS', 'FAILURE') });
    expect(tampered.code).toBe(1);
    expect(tampered.stderr).toContain('the webhook does not verify');
  });
});
