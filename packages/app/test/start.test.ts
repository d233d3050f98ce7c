import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import {
  buildOpenApi,
  endpointByPath,
  SAMPLE_IMAGES,
  sampleImageUrl,
  withSampleImages,
} from '@imagegen/contract';
import { createEngineRegistry } from '@imagegen/engines';
import { createTestDatabase, freePort, startLoopbackApi, type TestDatabase } from '@imagegen/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StartedProcess, startProcess } from './support/start-process.ts';

const run = promisify(execFile);
// The operator CLI is the server's; it runs beside the started program.
const CLI = path.resolve(import.meta.dirname, '../../server/src/cli/main.ts');

describe('npm start and the CLI', () => {
  let db: TestDatabase;
  let dataDir: string;
  let start: StartedProcess;
  let output = '';
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    db = await createTestDatabase({ migrate: false });
    dataDir = await mkdtemp(path.join(tmpdir(), 'imagegen-start-test-'));
    const port = await freePort();
    env = {
      ...process.env,
      DATABASE_URL: db.url,
      IMAGEGEN_DATA_DIR: dataDir,
      API_PORT: String(port),
      DOCS_PORT: String(await freePort()),
      IMAGEGEN_ENGINES: 'sandbox',
      IMAGEGEN_API_KEY: '',
      // As a default start: loopback inputs refused, but for the API's own links.
      IMAGEGEN_ALLOW_PRIVATE_URLS: '',
      PUBLIC_URL: '',
      SEARCH_APP_ID: 'start-app',
      SEARCH_API_KEY: 'start-key',
      SEARCH_INDEX: '',
      SEARCH_HOSTS: '',
      // Debug lines too: the API lists the routes it serves.
      LOG_LEVEL: 'debug',
    };
    start = startProcess(env);
    await start.waitFor('status/<id>');
    output = start.output();
  });
  afterAll(async () => {
    start.kill();
    await db.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('prints a key on first start and a curl line that works as pasted', async () => {
    const key = /Your API key \(shown once, keep it\): (ig_[A-Za-z0-9]{32})/.exec(output)?.[1];
    expect(key).toBeDefined();
    const curlLine = output.split('\n').find((line) => line.trim().startsWith('curl -s -X POST'))!;
    const { stdout } = await run('sh', ['-c', curlLine.trim()]);
    const accepted = JSON.parse(stdout) as { status: string; id: string };
    expect(accepted.status).toBe('PENDING');
    const statusLine = output
      .split('\n')
      .find((line) => line.includes('/status/<id>'))!
      .trim()
      .replace('<id>', accepted.id);
    let body: { status: string } = { status: 'PENDING' };
    for (let i = 0; i < 100 && body.status === 'PENDING'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      body = JSON.parse((await run('sh', ['-c', statusLine])).stdout);
    }
    expect(body.status).toBe('SUCCESS');
  });

  it("serves its sample images, and runs the playground's image2image example on them as it is", async () => {
    const publicUrl = `http://127.0.0.1:${env.API_PORT}`;
    for (const sample of Object.keys(SAMPLE_IMAGES) as (keyof typeof SAMPLE_IMAGES)[]) {
      const served = await fetch(sampleImageUrl(publicUrl, sample));
      expect([served.status, served.headers.get('content-type')]).toEqual([
        200,
        sample === 'mask' ? 'image/png' : 'image/jpeg',
      ]);
    }
    const key = /Your API key \(shown once, keep it\): (ig_[A-Za-z0-9]{32})/.exec(output)![1]!;
    const example = withSampleImages(endpointByPath('/sd/image2image/v1')!.example, publicUrl) as {
      init_image: string;
    };
    // The address the docs pages use for the API, which the worker reads without any network
    // request: no IMAGEGEN_ALLOW_PRIVATE_URLS is needed for a loopback address.
    expect(example.init_image).toBe(`${publicUrl}/files/samples/product.jpg`);
    const headers = { 'API-Key': key, 'Content-Type': 'application/json' };
    const submitted = await fetch(`${publicUrl}/sd/image2image/v1`, {
      method: 'POST',
      headers,
      body: JSON.stringify(example),
    });
    const { id } = (await submitted.json()) as { id: string };
    let body: { status: string; error?: string } = { status: 'PENDING' };
    for (let i = 0; i < 200 && body.status === 'PENDING'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      body = await (await fetch(`${publicUrl}/sd/image2image/v1/status/${id}`, { headers })).json();
    }
    expect(body).toMatchObject({ status: 'SUCCESS' });
  });

  it('says which pipelines answer with placeholders, and how to get real images', () => {
    const line = output.split('\n').find((each) => each.startsWith('Placeholders: '));
    expect(line).toMatch(
      /^Placeholders: \d+ pipelines answer with labelled placeholder images, not real ones \(engine sandbox\): \/sd\/text2image\/v1, /,
    );
    expect(output).toContain(`For real images, set COMFYUI_URLS to your ComfyUI servers: http://`);
    expect(output).toContain('/Deployment/Run-diffusion-on-ComfyUI');
  });

  it('serves /openapi.json with the notes of the engines it serves: the sandbox alone adds none', async () => {
    const served = await (await fetch(`http://127.0.0.1:${env.API_PORT}/openapi.json`)).json();
    const serverUrl = served.servers[0].url;
    expect(served).toEqual(JSON.parse(JSON.stringify(buildOpenApi({ serverUrl }))));
    expect(JSON.stringify(served)).not.toContain('cpu engine classifies');
  });

  it('serves exactly the routes the test suites build, and answers their trailing-slash forms with 307', async () => {
    const logged = start
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { component?: string; msg?: string; routes?: string[] })
      .find((line) => line.component === 'api' && line.msg === 'routes served');
    expect(logged?.routes?.length).toBeGreaterThan(100);
    // The loopback API every HTTP suite runs on (through the API harness, the client's and the
    // browser tests' support), with no settings but its address.
    const tested: string[] = [];
    const loopback = await startLoopbackApi({
      pool: db.pool,
      engines: createEngineRegistry([], { enabled: [], pinned: {} }),
      withWorker: false,
      onRoute: (route) => {
        for (const method of [route.method].flat()) tested.push(`${method} ${route.url}`);
      },
    });
    await loopback.close();
    expect([...logged!.routes!].sort()).toEqual(tested.sort());
    // What that once hid: the docs' analytics preflight made every redirect a 404.
    expect(logged!.routes).toContain('OPTIONS /analytics/v1/events');
    const redirected = await fetch(`http://127.0.0.1:${env.API_PORT}/load_model/v1/`, {
      method: 'POST',
      redirect: 'manual',
    });
    expect([redirected.status, redirected.headers.get('location')]).toEqual([
      307,
      `http://127.0.0.1:${env.API_PORT}/load_model/v1`,
    ]);
  });

  it('answers liveness and readiness for all four roles on the API port, beside the unchanged /health', async () => {
    const api = `http://127.0.0.1:${env.API_PORT}`;
    expect(await (await fetch(`${api}/health/live`)).json()).toEqual({ status: 'live' });
    const ready = await fetch(`${api}/health/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({
      status: 'ready',
      roles: { api: 'ready', worker: 'ready', webhooks: 'ready', docs: 'ready' },
    });
    expect(await (await fetch(`${api}/health`)).json()).toMatchObject({ status: 'ok', database: 'ok' });
  });

  it('logs JSON lines that follow the task, and serves one registry at /metrics on the API and docs ports', async () => {
    const lines = start
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const submitted = lines.find((line) => line.component === 'api' && line.msg === 'task submitted');
    expect(submitted?.requestId).toEqual(expect.any(String));
    const succeeded = lines.find((line) => line.component === 'worker' && line.msg === 'task succeeded');
    expect(succeeded).toMatchObject({ taskId: submitted?.taskId, requestId: submitted?.requestId });

    for (const port of [env.API_PORT, env.DOCS_PORT]) {
      const scraped = await fetch(`http://localhost:${port}/metrics`);
      expect(scraped.status).toBe(200);
      const text = await scraped.text();
      expect(text).toMatch(
        /^imagegen_tasks_succeeded_total\{pipeline="\/sd\/text2image\/v1",engine="sandbox"\} 1$/m,
      );
      expect(text).toContain('process_cpu_seconds_total');
      // How long the event loop was held since the last scrape: what a stalled API shows first.
      expect(text).toMatch(/^nodejs_eventloop_lag_max_seconds [0-9.e-]+$/m);
    }
  });

  it('hands the docs pages the API address and search credentials of this run, and searches with them', async () => {
    const docsUrl = `http://localhost:${env.DOCS_PORT}`;
    const home = await (await fetch(`${docsUrl}/`)).text();
    expect(home).toContain(`"apiUrl":"http://127.0.0.1:${env.API_PORT}"`);
    expect(home).toContain('"appId":"start-app","apiKey":"start-key"');
    const search = (appId: string, apiKey: string) =>
      fetch(`${docsUrl}/1/indexes/*/queries?x-algolia-application-id=${appId}&x-algolia-api-key=${apiKey}`, {
        method: 'POST',
        body: JSON.stringify({ requests: [{ indexName: 'docs', query: 'relight' }] }),
      });
    expect((await search('start-app', 'start-key')).status).toBe(200);
    expect((await search('imagegen', 'search-only-key')).status).toBe(403);
  });

  it('serves the built documentation site on DOCS_PORT and takes its page views at the API', async () => {
    const docsUrl = `http://localhost:${env.DOCS_PORT}`;
    expect(output).toContain(`Documentation: http://`);
    const home = await fetch(`${docsUrl}/`);
    expect(home.status).toBe(200);
    expect(await home.text()).toContain('<title');
    expect((await fetch(`${docsUrl}/no/such/page`)).status).toBe(404);

    const pageView = await fetch(`http://localhost:${env.API_PORT}/analytics/v1/events`, {
      method: 'POST',
      headers: { origin: docsUrl, 'content-type': 'text/plain' },
      body: JSON.stringify({ events: [{ type: 'page_view', path: '/Introduction/getting-started' }] }),
    });
    expect(pageView.status).toBe(202);
    expect(pageView.headers.get('access-control-allow-origin')).toBe(docsUrl);
    const stored = await db.pool.query('SELECT path FROM analytics_events');
    expect(stored.rows).toEqual([{ path: '/Introduction/getting-started' }]);

    const foreign = await fetch(`http://localhost:${env.API_PORT}/analytics/v1/events`, {
      method: 'POST',
      headers: { origin: 'http://evil.example', 'content-type': 'text/plain' },
      body: JSON.stringify({ events: [{ type: 'page_view', path: '/' }] }),
    });
    expect(foreign.status).toBe(403);
  });

  // Seven CLI processes, each a cold tsx start: seconds each on a loaded 2-core machine.
  it('creates owners, keys, subscriptions and servers from the CLI, beside the running API', {
    // Seven cold starts of the CLI (tsx): minutes on a busy machine, a bound for a hang.
    timeout: 300_000,
  }, async () => {
    const cli = async (...args: string[]) =>
      JSON.parse((await run(process.execPath, ['--import', 'tsx', CLI, ...args, '--json'], { env })).stdout);
    const owner = await cli('owners', 'create', '--name', 'acme', '--plan', 'epbasic');
    expect(owner).toMatchObject({ name: 'acme', plan: 'EPBASIC' });
    expect(owner.api_key).toMatch(/^ig_[A-Za-z0-9]{32}$/);
    const key = await cli('keys', 'create', '--owner', owner.owner_id);
    expect(key.api_key).not.toBe(owner.api_key);
    const sub = await cli(
      'subscriptions',
      'set',
      '--owner',
      owner.owner_id,
      '--plan',
      'EPPREMIUM',
      '--pod-id',
      'pod-7',
    );
    expect(sub).toMatchObject({ plan: 'EPPREMIUM', pod_id: 'pod-7', status: 'active' });
    expect(await cli('servers', 'add', '--id', 'gpu-7', '--owner', owner.owner_id)).toMatchObject({
      id: 'gpu-7',
    });
    const owners = await cli('owners', 'list');
    expect(owners.find((o: { owner_id: string }) => o.owner_id === owner.owner_id)).toMatchObject({
      plan: 'EPPREMIUM',
      keys: 2,
    });
    const revoked = await cli('keys', 'revoke', '--owner', owner.owner_id);
    expect(revoked.revoked).toBe(2);
    // The page view the docs test above sent through the API.
    expect(await cli('analytics', 'page-views', '--days', '1')).toEqual([
      { path: '/Introduction/getting-started', views: 1 },
    ]);
  });

  it('refuses an unknown plan with a clear message and exit status 2', async () => {
    const failure = await run(
      process.execPath,
      ['--import', 'tsx', CLI, 'owners', 'create', '--name', 'x', '--plan', 'GOLD'],
      {
        env,
      },
    ).catch((error: { code: number; stderr: string }) => error);
    expect(failure).toMatchObject({ code: 2 });
    expect((failure as { stderr: string }).stderr).toContain('unknown plan GOLD');
  });

  // Draining stops the worker, the dispatcher, the API and the docs host, then the engines and the
  // bundled PostgreSQL. The API ends the half request below after its 5 s grace; the bound is
  // generous because whole runs on a loaded 2-core machine saw drains of 29 to 68 s before
  // connections like this one were ended (the one that was logged waited for the API).
  it('shuts down on SIGTERM and exits 0 after draining, though a client holds half a request', {
    timeout: 110_000,
  }, async () => {
    // A client that sent half a request and waits: Node stops timing it out once the API's close
    // begins, so the drain has to end it, or would wait for it for ever.
    const half = connect(Number(env.API_PORT), '127.0.0.1');
    await new Promise<void>((resolve) => half.once('connect', resolve));
    half.write('POST /sd/text2image/v1 HTTP/1.1\r\nHost: x\r\n');
    const halfClosed = new Promise<void>((resolve) => half.once('close', () => resolve()));
    half.on('error', () => {});
    start.child.kill('SIGTERM');
    // A drain that hangs names the step it hangs in: npm start logs what it still waits for every
    // 10 s, and the error shows the lines it printed last.
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(resolve, 100_000, 'late');
    });
    const code = await Promise.race([start.exited, late]);
    clearTimeout(timer);
    if (code === 'late') {
      const last = start.output().trimEnd().split('\n').slice(-30).join('\n');
      throw new Error(`npm start had not exited 100 s after SIGTERM; its last lines:\n${last}`);
    }
    // A slow drain that still ended shows in the test's output what it waited for.
    const waits = start
      .output()
      .split('\n')
      .filter((line) => line.includes('draining: '));
    if (waits.length > 0) console.log(`npm start's drain was slow:\n${waits.join('\n')}`);
    expect(code).toBe(0);
    expect(start.output()).toContain('"msg":"stopped"');
    await halfClosed;
  });

  // A second cold start: tens of seconds on a loaded 2-core machine.
  it('on a later start, prints the command that makes another key with the first owner id filled in', {
    // Seven cold starts of the CLI (tsx): minutes on a busy machine, a bound for a hang.
    timeout: 300_000,
  }, async () => {
    const { rows } = await db.pool.query<{ id: string }>(
      "SELECT id FROM owners WHERE name = 'default' ORDER BY created_at LIMIT 1",
    );
    const again = startProcess({ ...env, IMAGEGEN_ROLES: 'api', API_PORT: String(await freePort()) });
    try {
      await again.waitFor('keys create --owner');
      const banner = again.output();
      expect(banner).not.toContain('<owner-id>');
      expect(banner).toContain(`API keys: existing keys work; make another for owner default with\n`);
      expect(banner).toContain(`  npm run --silent cli -- keys create --owner ${rows[0]!.id}\n`);
    } finally {
      again.kill();
      await again.exited;
    }
  });
});
