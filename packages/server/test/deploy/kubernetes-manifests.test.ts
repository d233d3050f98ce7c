/**
 * The Kubernetes manifests under deploy/kubernetes: valid against the Kubernetes API's own schemas
 * (kubernetes-models, whose validators are compiled from the API's OpenAPI definitions, Kubernetes
 * 1.36; nothing is downloaded), strictly (an unknown field, such as a misspelt probe, is an error, as
 * `kubectl apply --validate=strict` makes it), and consistent with the program: every variable they
 * set is a documented setting the program reads, the probes ask the health paths on the port the
 * process answers them on, the grace period covers the drain, and the Job runs a real command. The
 * KEDA ScaledObject is checked against KEDA's own types (@kubernetes-models/keda, KEDA 2.19), and its
 * query against the series the program exports.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { USAGE } from '../../src/cli/commands.ts';
import { readStartConfig } from '../../src/cli/start-config.ts';
import { Metrics } from '../../src/observability/metrics.ts';
import {
  documentedSettings,
  missingProgramFiles,
  programSource,
  ROOT,
  SDK_VARIABLES,
} from './deploy-settings.ts';
import { type ModelClass, strictModelErrors } from './strict-model-validation.ts';

const MANIFESTS = path.join(ROOT, 'deploy/kubernetes');
/** The kinds the manifests may hold; another needs its class here. */
const MODELS: ModelClass[] = [ConfigMap, Deployment, Job, ScaledObject, Secret, Service];

interface Manifest {
  file: string;
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  // biome-ignore lint/suspicious/noExplicitAny: a Kubernetes object, checked by the schema first
  spec?: any;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

interface Container {
  name: string;
  command?: string[];
  env?: { name: string; value?: string }[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  ports?: { name?: string; containerPort: number }[];
  readinessProbe?: { httpGet?: { path: string; port: string | number } };
  livenessProbe?: { httpGet?: { path: string; port: string | number } };
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
}

function loadManifests(): Manifest[] {
  return readdirSync(MANIFESTS)
    .filter((name) => name.endsWith('.yaml'))
    .flatMap((file) =>
      parseAllDocuments(readFileSync(path.join(MANIFESTS, file), 'utf8')).map((doc) => {
        if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0]!.message}`);
        return { ...(doc.toJS() as Omit<Manifest, 'file'>), file };
      }),
    );
}

function schemaErrors(manifest: Manifest): string[] {
  const { file: _file, ...object } = manifest;
  const Model = MODELS.find((m) => m.apiVersion === manifest.apiVersion && m.kind === manifest.kind);
  if (!Model)
    throw new Error(`no model for ${manifest.apiVersion} ${manifest.kind}: add its class to MODELS`);
  return strictModelErrors(Model, object);
}

const manifests = loadManifests();
const byKind = (kind: string) => manifests.filter((m) => m.kind === kind);
const named = (kind: string, name: string) => byKind(kind).find((m) => m.metadata.name === name)!;
const podContainers = (m: Manifest): Container[] => m.spec.template.spec.containers;

/** What a container's process sees: its envFrom sources in order, then its own env. */
function effectiveEnv(container: Container): Record<string, string> {
  const env: Record<string, string> = {};
  for (const source of container.envFrom ?? []) {
    const from = source.configMapRef
      ? named('ConfigMap', source.configMapRef.name).data
      : named('Secret', source.secretRef!.name).stringData;
    Object.assign(env, from);
  }
  for (const variable of container.env ?? []) env[variable.name] = variable.value ?? '';
  return env;
}

describe('the Kubernetes manifests', () => {
  it('are the Deployments, Services, settings and migration Job of a fleet', () => {
    expect(manifests.map((m) => `${m.kind}/${m.metadata.name}`).sort()).toEqual([
      'ConfigMap/imagegen-settings',
      'Deployment/imagegen-api',
      'Deployment/imagegen-docs',
      'Deployment/imagegen-worker',
      'Job/imagegen-migrate',
      'ScaledObject/imagegen-worker',
      'Secret/imagegen-secrets',
      'Service/imagegen-api',
      'Service/imagegen-docs',
    ]);
  });

  it('validate against the Kubernetes schemas', () => {
    for (const manifest of manifests) {
      expect(schemaErrors(manifest), `${manifest.file}: ${manifest.kind}/${manifest.metadata.name}`).toEqual(
        [],
      );
    }
  });

  it('are checked strictly: a misspelt field or a wrong type is refused', () => {
    const api = named('Deployment', 'imagegen-api');
    const container = podContainers(api)[0]!;
    const misspelt = structuredClone(api);
    const { readinessProbe, ...rest } = container;
    misspelt.spec.template.spec.containers = [{ ...rest, readinesProbe: readinessProbe }];
    expect(schemaErrors(misspelt).join('\n')).toContain('readinesProbe');
    const wrongType = structuredClone(api);
    wrongType.spec.replicas = 'two';
    expect(schemaErrors(wrongType).join('\n')).toContain('/spec/replicas must be integer');
  });

  it('set only documented settings that the program reads', () => {
    const documented = documentedSettings();
    const source = programSource();
    const set = new Set<string>();
    for (const m of byKind('ConfigMap')) for (const name of Object.keys(m.data ?? {})) set.add(name);
    for (const m of byKind('Secret')) for (const name of Object.keys(m.stringData ?? {})) set.add(name);
    for (const m of [...byKind('Deployment'), ...byKind('Job')]) {
      for (const c of podContainers(m)) for (const variable of c.env ?? []) set.add(variable.name);
    }
    expect(set.size).toBeGreaterThan(10);
    for (const name of set) {
      if (SDK_VARIABLES.includes(name)) continue;
      expect(documented.has(name), `${name} is in README's configuration table`).toBe(true);
      expect(source.includes(name), `${name} is read by the program`).toBe(true);
    }
    expect([...set].filter((name) => SDK_VARIABLES.includes(name))).toEqual(SDK_VARIABLES);
  });

  it('probe /health/ready and /health/live on the port each process answers them on, listening beyond loopback', () => {
    for (const deployment of byKind('Deployment')) {
      const [container] = podContainers(deployment);
      const config = readStartConfig(effectiveEnv(container!));
      expect(config.apiHost, deployment.metadata.name).toBe('0.0.0.0');
      const healthPort = config.roles.has('api') ? config.apiPort : config.healthPort;
      const portOf = (port: string | number) =>
        typeof port === 'number' ? port : container!.ports!.find((p) => p.name === port)!.containerPort;
      expect(container!.readinessProbe?.httpGet?.path).toBe('/health/ready');
      expect(container!.livenessProbe?.httpGet?.path).toBe('/health/live');
      expect(portOf(container!.readinessProbe!.httpGet!.port), deployment.metadata.name).toBe(healthPort);
      expect(portOf(container!.livenessProbe!.httpGet!.port), deployment.metadata.name).toBe(healthPort);
      if (config.roles.has('docs')) {
        expect(container!.ports!.map((p) => p.containerPort)).toContain(config.docsPort);
      }
    }
    expect([
      ...readStartConfig(effectiveEnv(podContainers(named('Deployment', 'imagegen-api'))[0]!)).roles,
    ]).toEqual(['api', 'webhooks']);
    expect([
      ...readStartConfig(effectiveEnv(podContainers(named('Deployment', 'imagegen-worker'))[0]!)).roles,
    ]).toEqual(['worker']);
  });

  it('give each pod the time to drain: the preStop pause and SHUTDOWN_GRACE_MS fit in the grace period', () => {
    for (const deployment of byKind('Deployment')) {
      const [container] = podContainers(deployment);
      const { shutdownGraceMs } = readStartConfig(effectiveEnv(container!));
      const pause = Number(container!.lifecycle?.preStop?.exec?.command.at(-1) ?? 0);
      const grace = deployment.spec.template.spec.terminationGracePeriodSeconds as number;
      expect(grace, deployment.metadata.name).toBeGreaterThanOrEqual(pause + shutdownGraceMs / 1000 + 5);
    }
  });

  it('route each Service to a named port of the pods it selects', () => {
    for (const service of byKind('Service')) {
      const target = byKind('Deployment').find((d) =>
        Object.entries(service.spec.selector).every(([k, v]) => d.spec.template.metadata.labels[k] === v),
      )!;
      expect(target, service.metadata.name).toBeDefined();
      const names = podContainers(target).flatMap((c) => (c.ports ?? []).map((p) => p.name));
      for (const port of service.spec.ports) expect(names).toContain(port.targetPort);
    }
  });

  it('run the CLI’s migrate command in the migration Job, and the program in every Deployment, built', () => {
    const [job] = podContainers(named('Job', 'imagegen-migrate'));
    expect(job!.command!.slice(-2)).toEqual(['packages/server/dist/src/cli/main.js', 'migrate']);
    expect(USAGE).toMatch(/^ {2}migrate /m);
    for (const deployment of byKind('Deployment')) {
      expect(podContainers(deployment)[0]!.command!.at(-1)).toBe('packages/app/dist/src/start.js');
    }
    for (const m of [...byKind('Deployment'), ...byKind('Job')]) {
      for (const c of podContainers(m)) expect(missingProgramFiles(c.command ?? [])).toEqual([]);
    }
  });

  it('scale the workers with KEDA on the queue the API reports, from zero, within the connections', async () => {
    const scaled = named('ScaledObject', 'imagegen-worker');
    const worker = named('Deployment', 'imagegen-worker');
    expect(scaled.spec.scaleTargetRef).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: 'imagegen-worker',
    });
    const [trigger] = scaled.spec.triggers as { type: string; metadata: Record<string, string> }[];
    expect(trigger!.type).toBe('prometheus');

    // Its query names only series the program exports, read from the queue by the API's metrics.
    const exported = await new Metrics().render();
    const names = trigger!.metadata.query!.match(/imagegen_[a-z_]+/g) ?? [];
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) expect(exported, name).toContain(`# TYPE ${name} gauge`);
    expect(Number(trigger!.metadata.threshold)).toBeGreaterThan(0);
    expect(trigger!.metadata.activationThreshold).toBe('0');

    // At zero workers nothing else may stop: the API reads the queue and delivers webhooks.
    expect(scaled.spec.minReplicaCount).toBe(0);
    const apiRoles = readStartConfig(
      effectiveEnv(podContainers(named('Deployment', 'imagegen-api'))[0]!),
    ).roles;
    expect(apiRoles.has('webhooks')).toBe(true);
    expect(readStartConfig(effectiveEnv(podContainers(worker)[0]!)).roles.has('webhooks')).toBe(false);

    // Its most workers fit in PostgreSQL's default 100 connections with everything else.
    const connections = (m: Manifest, replicas: number) => {
      const config = readStartConfig(effectiveEnv(podContainers(m)[0]!));
      const foreground = config.roles.has('api') || config.roles.has('docs');
      const background = config.roles.has('worker') || config.roles.has('webhooks');
      const each = (foreground ? config.poolSize : 0) + (background ? config.workerPoolSize : 0);
      return each * replicas;
    };
    const total =
      connections(named('Deployment', 'imagegen-api'), named('Deployment', 'imagegen-api').spec.replicas) +
      connections(
        named('Deployment', 'imagegen-docs'),
        named('Deployment', 'imagegen-docs').spec.replicas ?? 1,
      ) +
      connections(worker, scaled.spec.maxReplicaCount);
    expect(total).toBeLessThanOrEqual(100);
  });

  it('check the ScaledObject strictly too', () => {
    const scaled = named('ScaledObject', 'imagegen-worker');
    const misspelt = structuredClone(scaled);
    misspelt.spec.minReplicas = 0;
    expect(schemaErrors(misspelt).join('\n')).toContain('minReplicas');
    const wrongType = structuredClone(scaled);
    wrongType.spec.triggers[0].metadata.threshold = 6;
    expect(schemaErrors(wrongType).join('\n')).toContain(
      '/spec/triggers/0/metadata/threshold must be string',
    );
  });
});
