/**
 * The product as a fleet in miniature: an API process and worker processes started with
 * IMAGEGEN_ROLES, on one PostgreSQL and one S3 bucket (s3rver on loopback), each with a data
 * directory of its own that nothing may create: every file goes through the bucket.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestDatabase, eventually, freePort, type TestDatabase } from '@imagegen/server/testing';
import { S3RVER_CREDENTIALS, type S3Server, startS3Server } from '@imagegen/server/testing/s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StartedProcess, startProcess } from './support/start-process.ts';

const KEY = 'ig_rolesTestKey0123456789abcdefgh';

describe('npm start, one role per process', { timeout: 120_000 }, () => {
  let db: TestDatabase;
  let s3: S3Server;
  let scratch: string;
  let apiUrl: string;
  let api: StartedProcess;
  const started: StartedProcess[] = [];
  const dataDirs: string[] = [];

  /** The environment of one process: the shared database and bucket, a data directory of its own. */
  const envFor = (extra: Record<string, string>): NodeJS.ProcessEnv => {
    const dataDir = path.join(scratch, `data-${dataDirs.length}`);
    dataDirs.push(dataDir);
    return {
      ...process.env,
      DATABASE_URL: db.url,
      IMAGEGEN_DATA_DIR: dataDir,
      IMAGEGEN_ENGINES: 'sandbox',
      IMAGEGEN_API_KEY: KEY,
      PUBLIC_URL: apiUrl,
      S3_BUCKET: s3.bucket,
      S3_ENDPOINT: s3.endpoint,
      S3_FORCE_PATH_STYLE: 'true',
      // Credentials come from the SDK's default chain, here its environment variables.
      AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
      ...extra,
    };
  };
  const start = (extra: Record<string, string>) => {
    const child = startProcess(envFor(extra));
    started.push(child);
    return child;
  };
  const startWorker = async (extra: Record<string, string>) => {
    const healthPort = String(await freePort());
    const worker = start({ IMAGEGEN_ROLES: 'worker,webhooks', HEALTH_PORT: healthPort, ...extra });
    await worker.waitFor('ready: worker, webhooks');
    return { worker, health: `http://127.0.0.1:${healthPort}` };
  };
  const submit = async () => {
    const response = await fetch(`${apiUrl}/sd/text2image/v1`, {
      method: 'POST',
      headers: { 'API-Key': KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'a lighthouse', negative_prompt: 'blurry', samples: 1 }),
    });
    expect(response.status).toBe(200);
    return ((await response.json()) as { id: string }).id;
  };
  const stateOf = async (id: string) =>
    (await db.pool.query<{ state: string }>('SELECT state FROM tasks WHERE id = $1', [id])).rows[0]!.state;
  const until = (id: string, state: string, ms = 60_000) =>
    eventually(async () => ((await stateOf(id)) === state ? true : undefined), ms);

  beforeAll(async () => {
    db = await createTestDatabase({ migrate: false });
    s3 = await startS3Server();
    scratch = await mkdtemp(path.join(tmpdir(), 'imagegen-roles-'));
    const port = await freePort();
    apiUrl = `http://127.0.0.1:${port}`;
    api = start({ IMAGEGEN_ROLES: 'api', API_PORT: String(port), DOCS_PORT: String(await freePort()) });
    await api.waitFor('status/<id>');
  });
  afterAll(async () => {
    for (const child of started) child.kill();
    await s3.close();
    await db.drop();
    await rm(scratch, { recursive: true, force: true });
  });

  it('an API process answers its health, the service summary, and serves no docs', async () => {
    expect(await (await fetch(`${apiUrl}/health/live`)).json()).toEqual({ status: 'live' });
    const ready = await fetch(`${apiUrl}/health/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', roles: { api: 'ready' } });
    expect(await (await fetch(`${apiUrl}/health`)).json()).toMatchObject({ status: 'ok', database: 'ok' });
    expect(api.output()).toContain('Documentation: not served by this process (IMAGEGEN_ROLES has no docs)');
  });

  it('a worker process runs the API’s tasks, drains on SIGTERM, and its outputs are served from the bucket', async () => {
    const { worker, health } = await startWorker({ SANDBOX_DELAY_MS: '3000', SHUTDOWN_GRACE_MS: '30000' });
    expect(await (await fetch(`${health}/health/live`)).json()).toEqual({ status: 'live' });
    const ready = await fetch(`${health}/health/ready`);
    expect(await ready.json()).toEqual({ status: 'ready', roles: { worker: 'ready', webhooks: 'ready' } });

    const id = await submit();
    await until(id, 'running');
    worker.child.kill('SIGTERM');
    // Draining: out of rotation at once, still alive until the running task is done.
    const draining = await eventually(async () => {
      const response = await fetch(`${health}/health/ready`);
      return response.status === 503 ? await response.json() : undefined;
    });
    expect(draining).toEqual({
      status: 'unready',
      roles: { worker: 'shutting down', webhooks: 'shutting down' },
    });
    expect((await fetch(`${health}/health/live`)).status).toBe(200);
    expect(await worker.exited).toBe(0);
    expect(await stateOf(id)).toBe('succeeded');

    const status = (await (
      await fetch(`${apiUrl}/sd/text2image/v1/status/${id}`, { headers: { 'API-Key': KEY } })
    ).json()) as { status: string; download_urls: string[] };
    expect(status.status).toBe('SUCCESS');
    const [link] = status.download_urls;
    expect(link).toMatch(new RegExp(`^${apiUrl}/files/`));
    const redirect = await fetch(link!, { redirect: 'manual' });
    expect(redirect.status).toBe(302);
    const location = redirect.headers.get('location')!;
    expect(location.startsWith(`${s3.endpoint}/${s3.bucket}/`)).toBe(true);
    const image = await fetch(location);
    expect(image.headers.get('content-type')).toBe('image/png');
    expect((await image.arrayBuffer()).byteLength).toBeGreaterThan(100);
  });

  it('a task still running when the grace period ends is released, and another worker finishes it', async () => {
    const { worker } = await startWorker({ SANDBOX_DELAY_MS: '600000', SHUTDOWN_GRACE_MS: '300' });
    const id = await submit();
    await until(id, 'running');
    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
    expect(worker.output()).toContain(`task ${id}: released for another worker (shutdown)`);
    expect(await stateOf(id)).toBe('queued');

    const next = await startWorker({ SANDBOX_DELAY_MS: '0' });
    await until(id, 'succeeded');
    next.worker.child.kill('SIGTERM');
    expect(await next.worker.exited).toBe(0);
    const row = await db.pool.query<{ output_keys: string[] }>(
      'SELECT output_keys FROM tasks WHERE id = $1',
      [id],
    );
    const [key] = row.rows[0]!.output_keys;
    expect((await s3.store().get(key!))?.contentType).toBe('image/png');
  });

  it('a worker process sweeps what has expired, from the bucket too, and counts it on /metrics', async () => {
    const { rows } = await db.pool.query<{ owner_id: string }>('SELECT owner_id FROM api_keys LIMIT 1');
    const key = 'expiredUploadFolder000/upload0.png';
    await s3.store().put(key, Buffer.from('old'), 'image/png');
    await db.pool.query(
      `INSERT INTO uploads (owner_id, blob_key, content_type, size_bytes, created_at)
       VALUES ($1, $2, 'image/png', 3, now() - interval '8 days')`,
      [rows[0]!.owner_id, key],
    );
    const { worker, health } = await startWorker({});
    const removed = 'imagegen_retention_removed_total{kind="uploads"} 1';
    await eventually(
      async () => (await (await fetch(`${health}/metrics`)).text()).includes(removed) || undefined,
    );
    expect(await s3.store().get(key)).toBeNull();
    expect((await db.pool.query('SELECT 1 FROM uploads WHERE blob_key = $1', [key])).rowCount).toBe(0);
    expect((await fetch(`${apiUrl}/files/${key}`)).status).toBe(404);
    expect(worker.output()).toContain('retention: removed 1 uploads');
    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
  });

  it('an API process answers the request it holds when SIGTERM comes, then exits 0; no process wrote a file of its own', async () => {
    // No worker runs now: the submission waits for its task until the API closes.
    const held = fetch(`${apiUrl}/sd/text2image/v1`, {
      method: 'POST',
      headers: { 'API-Key': KEY, 'content-type': 'application/json', Prefer: 'wait=30' },
      body: JSON.stringify({ prompt: 'held', negative_prompt: 'blurry', samples: 1 }),
    });
    await eventually(async () => {
      const queued = await db.pool.query("SELECT 1 FROM tasks WHERE input->>'prompt' = 'held'");
      return queued.rowCount ? true : undefined;
    });
    const signalled = Date.now();
    api.child.kill('SIGTERM');
    const answer = await held;
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ status: 'PENDING' });
    expect(await api.exited).toBe(0);
    // Promptly: the answered connection closed with its answer, instead of idling for the
    // 72-second keep-alive that would hold the close.
    expect(Date.now() - signalled).toBeLessThan(15_000);
    for (const dir of dataDirs) expect(existsSync(dir)).toBe(false);
  });
});
