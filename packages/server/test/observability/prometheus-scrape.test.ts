import { type ChildProcess, spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { access, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Metrics } from '../../src/observability/metrics.ts';
import { type ApiHarness, startApiHarness } from '../support/api-harness.ts';
import { freePort } from '../support/loopback.ts';

const TEXT2IMAGE = '/sd/text2image/v1';
const TOKEN = 'scrape-token-for-the-test';
/** Debian's package (`apt-get install prometheus`; `npm test`'s pretest installs it where missing). */
const PROMETHEUS = process.env.PROMETHEUS_PATH ?? '/usr/bin/prometheus';

interface QueryAnswer {
  status: string;
  data: { result: { metric: Record<string, string>; value: [number, string] }[] };
}

/**
 * A real Prometheus server (Debian's binary, on loopback, a temporary storage folder, a one-second
 * scrape interval) scrapes the API's /metrics with the bearer token, and one series is read back
 * through its query API.
 */
describe('a real Prometheus server scraping the API', () => {
  let api: ApiHarness;
  let dir: string;
  let prometheus: ChildProcess;
  let prometheusUrl: string;
  let output = '';

  beforeAll(async () => {
    // Named here: a spawn of a missing program fails only as a separate, unhandled ENOENT.
    await access(PROMETHEUS, constants.X_OK).catch(() => {
      throw new Error(
        `no Prometheus server at ${PROMETHEUS}: apt-get install prometheus (or set PROMETHEUS_PATH)`,
      );
    });
    api = await startApiHarness({ metrics: new Metrics({ token: TOKEN }) });
    dir = await mkdtemp(path.join(tmpdir(), 'imagegen-prometheus-'));
    const target = new URL(api.url).host;
    await writeFile(
      path.join(dir, 'prometheus.yml'),
      [
        'global:',
        '  scrape_interval: 1s',
        '  scrape_timeout: 1s',
        'scrape_configs:',
        '  - job_name: imagegen',
        '    metrics_path: /metrics',
        '    authorization:',
        `      credentials: ${TOKEN}`,
        '    static_configs:',
        `      - targets: ['${target}']`,
        '',
      ].join('\n'),
    );
    const port = await freePort();
    prometheusUrl = `http://127.0.0.1:${port}`;
    prometheus = spawn(
      PROMETHEUS,
      [
        `--config.file=${path.join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${path.join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    prometheus.on('error', (error) => {
      output += `cannot run ${PROMETHEUS}: ${error.message}\n`;
    });
    prometheus.stdout!.on('data', (chunk) => {
      output += chunk;
    });
    prometheus.stderr!.on('data', (chunk) => {
      output += chunk;
    });
  });
  afterAll(async () => {
    if (prometheus?.pid !== undefined && prometheus.exitCode === null) {
      const exited = new Promise((resolve) => prometheus.once('exit', resolve));
      prometheus.kill('SIGTERM');
      await exited;
    }
    if (dir) await rm(dir, { recursive: true, force: true });
    await api?.close();
  });

  async function query(expression: string): Promise<QueryAnswer | null> {
    const response = await fetch(
      `${prometheusUrl}/api/v1/query?query=${encodeURIComponent(expression)}`,
    ).catch(() => null);
    return response?.ok ? ((await response.json()) as QueryAnswer) : null;
  }

  /** The value Prometheus holds for `expression`, once it has one (a few scrapes at most). */
  async function heldValue(expression: string): Promise<string> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const answer = await query(expression);
      const value = answer?.data.result[0]?.value[1];
      if (value !== undefined) return value;
      if (Date.now() > deadline || prometheus.exitCode !== null) {
        throw new Error(`Prometheus has no ${expression} after 30 s:\n${output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  it('reads back the tasks submitted through the API', { timeout: 60_000 }, async () => {
    for (let n = 0; n < 2; n++) {
      const submitted = await api.request('POST', TEXT2IMAGE, { json: api.example(TEXT2IMAGE) });
      expect(submitted.status).toBe(200);
      await api.settle(`${TEXT2IMAGE}/status/${(submitted.body as { id: string }).id}`, api.alice.key);
    }
    expect(await heldValue('up{job="imagegen"} == 1')).toBe('1');
    expect(await heldValue(`imagegen_tasks_submitted_total{pipeline="${TEXT2IMAGE}"} == 2`)).toBe('2');
  });
});
