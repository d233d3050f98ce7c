/**
 * The monitoring under deploy/monitoring: the Grafana dashboard is valid against Grafana's own
 * dashboard schema (the JSON schema of `Dashboard` from @grafana/schema's published types,
 * generated here: unknown fields refused), its queries are valid PromQL (promtool checks them) on
 * series the program exports, and it shows what operators watch; the Prometheus alert rules pass
 * `promtool check rules`, fire as their unit tests say (`promtool test rules`), and name only
 * exported series. promtool comes with Debian's prometheus package (test/test-tools.sh).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import Ajv from 'ajv';
import { createGenerator } from 'ts-json-schema-generator';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { Metrics } from '../../src/observability/metrics.ts';
import { ROOT } from './deploy-settings.ts';

const run = promisify(execFile);
/** Grafana's reference to the dashboard's `datasource` variable (not a template literal). */
const GRAFANA_DATASOURCE = ['$', '{datasource}'].join('');
const MONITORING = path.join(ROOT, 'deploy/monitoring');
const PROMTOOL = path.join(path.dirname(process.env.PROMETHEUS_PATH ?? '/usr/bin/prometheus'), 'promtool');

interface Target {
  refId: string;
  expr: string;
  datasource?: { type: string; uid: string };
}
interface Panel {
  id: number;
  type: string;
  title: string;
  description?: string;
  gridPos: { h: number; w: number; x: number; y: number };
  datasource?: { type: string; uid: string };
  targets?: Target[];
}

let dashboard: { panels: Panel[]; templating: { list: { name: string; type: string; query: string }[] } };
let exported: string;

beforeAll(async () => {
  dashboard = JSON.parse(await readFile(path.join(MONITORING, 'grafana-dashboard.json'), 'utf8'));
  exported = await new Metrics().render();
  if (!existsSync(PROMTOOL)) {
    throw new Error(`no promtool at ${PROMTOOL}: apt-get install prometheus (or set PROMETHEUS_PATH)`);
  }
});

/** The imagegen series a PromQL expression names, each checked against what the program exports. */
function unexported(expr: string): string[] {
  const names = expr.match(/imagegen_[a-z_]+/g) ?? [];
  return names.filter((name) => {
    const base = name.replace(/_(bucket|sum|count)$/, '');
    return !new RegExp(`^# TYPE (${name} (gauge|counter)|${base} histogram)$`, 'm').test(exported);
  });
}

const queries = () =>
  dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => ({ panel, target })));

describe('the Grafana dashboard', () => {
  it("is valid against Grafana's dashboard schema, unknown fields refused", async () => {
    // Grafana's published types of a dashboard (schema version 39+), read as a JSON schema.
    const types = createRequire(import.meta.url)
      .resolve('@grafana/schema')
      .replace(/dist\/.*$/, 'dist/types/raw/dashboard/x/types.gen.d.ts');
    const schema = createGenerator({ path: types, type: 'Dashboard', skipTypeCheck: true }).createSchema(
      'Dashboard',
    );
    const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
    const valid = validate(dashboard);
    expect(validate.errors ?? [], JSON.stringify(validate.errors, null, 1)).toEqual([]);
    expect(valid).toBe(true);
    // The schema holds its fields to their declarations: a misspelt one is refused.
    expect(validate({ ...dashboard, refrsh: '30s' })).toBe(false);
    const [first, ...rest] = dashboard.panels;
    expect(validate({ ...dashboard, panels: [{ ...first, gridpos: first!.gridPos }, ...rest] })).toBe(false);
  }, 60_000);

  it('lays its panels out on the 24-column grid without overlaps, each with its own id and the Prometheus variable', () => {
    expect(dashboard.templating.list).toContainEqual(
      expect.objectContaining({ name: 'datasource', type: 'datasource', query: 'prometheus' }),
    );
    const ids = dashboard.panels.map((panel) => panel.id);
    expect(new Set(ids).size).toBe(ids.length);
    const cells = new Set<string>();
    for (const panel of dashboard.panels) {
      const { x, y, w, h } = panel.gridPos;
      expect(x + w, panel.title).toBeLessThanOrEqual(24);
      for (let column = x; column < x + w; column++) {
        for (let row = y; row < y + h; row++) {
          expect(cells.has(`${column},${row}`), `${panel.title} overlaps at ${column},${row}`).toBe(false);
          cells.add(`${column},${row}`);
        }
      }
      if (panel.type === 'row') continue;
      expect(panel.title.length, `panel ${panel.id}`).toBeGreaterThan(0);
      expect(panel.description?.length, panel.title).toBeGreaterThan(0);
      expect(panel.datasource).toEqual({ type: 'prometheus', uid: GRAFANA_DATASOURCE });
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
    }
  });

  it('queries only series the program exports, in valid PromQL', async () => {
    for (const { panel, target } of queries()) expect(unexported(target.expr), panel.title).toEqual([]);
    // promtool parses each query as a recording rule's (Grafana's $__rate_interval as a range).
    const rules = {
      groups: [
        {
          name: 'dashboard',
          rules: queries().map(({ target }, n) => ({
            record: `dashboard:query_${n}`,
            expr: target.expr.replaceAll('$__rate_interval', '5m'),
          })),
        },
      ],
    };
    const dir = await mkdtemp(path.join(tmpdir(), 'imagegen-dashboard-'));
    try {
      const file = path.join(dir, 'dashboard-queries.json');
      await writeFile(file, JSON.stringify(rules));
      const { stdout } = await run(PROMTOOL, ['check', 'rules', file]);
      expect(stdout).toContain(`SUCCESS: ${queries().length} rules found`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('shows what operators watch: queue per pipeline and its age, servers up, down and suspect, out-of-memory retries, outcomes, durations', () => {
    const shown = queries()
      .map(({ target }) => target.expr)
      .join('\n');
    for (const series of [
      'imagegen_pipeline_queue_depth',
      'imagegen_pipeline_queue_oldest_age_seconds',
      'imagegen_engine_server_state',
      'imagegen_engine_server_suspect',
      'imagegen_engine_server_out_of_memory_total',
      'imagegen_tasks_succeeded_total',
      'imagegen_tasks_failed_total',
      'imagegen_engine_run_seconds_bucket',
      'imagegen_engine_server_can_run',
      'imagegen_webhook_backlog',
      'imagegen_engine_models_bytes',
    ]) {
      expect(shown).toContain(series);
    }
  });
});

describe('the Prometheus alert rules', () => {
  it('pass promtool check rules, and fire as their unit tests say', async () => {
    const check = await run(PROMTOOL, ['check', 'rules', 'prometheus-alerts.yaml'], { cwd: MONITORING });
    expect(check.stdout).toContain('SUCCESS: 8 rules found');
    const test = await run(PROMTOOL, ['test', 'rules', 'prometheus-alerts.test.yaml'], { cwd: MONITORING });
    expect(test.stdout).toContain('SUCCESS');
  });

  it('alert on a growing queue, a group with every server down, a webhook backlog and the disk budget, on exported series', async () => {
    const rules = parse(await readFile(path.join(MONITORING, 'prometheus-alerts.yaml'), 'utf8')) as {
      groups: { rules: { alert: string; expr: string }[] }[];
    };
    const alerts = rules.groups.flatMap((group) => group.rules);
    for (const rule of alerts) expect(unexported(rule.expr), rule.alert).toEqual([]);
    expect(alerts.map((rule) => rule.alert)).toEqual(
      expect.arrayContaining([
        'ImagegenQueueGrowing',
        'ImagegenServerGroupDown',
        'ImagegenWebhookBacklog',
        'ImagegenModelsOverBudget',
      ]),
    );
    // Every alert has a unit test that sees it fire.
    const tests = await readFile(path.join(MONITORING, 'prometheus-alerts.test.yaml'), 'utf8');
    for (const rule of alerts)
      expect(tests, rule.alert).toMatch(
        new RegExp(`alertname: ${rule.alert}\\n\\s+exp_alerts:\\n\\s+- exp_labels`),
      );
  });
});
