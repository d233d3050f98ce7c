/**
 * deploy/compose/compose.yaml, checked as the Kubernetes manifests are: after the interpolation
 * `docker compose` does (`${VAR:-default}`), it is valid against the Compose Specification's JSON
 * schema (the copy the dclint package ships and validates with; nothing is downloaded), strictly (a
 * misspelt field is an error), and consistent with the program: every variable it gives imagegen
 * is a documented setting the program reads, with a value the program accepts, in both layouts
 * (all roles in one container, or API and worker apart), and the parts point at each other.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { parseCheckpoints, parseModelsDir, parseServerList } from '@imagegen/engine-comfyui/engine';
import { engineConfigFromEnv } from '@imagegen/engines';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { readStartConfig } from '../../src/cli/start-config.ts';
import { blobStoreFromEnv } from '../../src/storage/blob-store-from-env.ts';
import { S3BlobStore } from '../../src/storage/s3-blob-store.ts';
import {
  documentedSettings,
  missingProgramFiles,
  programSource,
  ROOT,
  SDK_VARIABLES,
} from './deploy-settings.ts';

const FILE = path.join(ROOT, 'deploy/compose/compose.yaml');
// dclint exports no path to its schema file: it is found beside its package.json.
const SCHEMA = JSON.parse(
  readFileSync(
    path.join(
      path.dirname(createRequire(import.meta.url).resolve('dclint/package.json')),
      'schemas/compose.schema.json',
    ),
    'utf8',
  ),
);

interface Service {
  image: string;
  command?: string[];
  entrypoint?: string[];
  profiles?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
  depends_on?: Record<string, { condition: string }> | string[];
  stop_grace_period?: string;
  healthcheck?: { test: string[] };
  // biome-ignore lint/suspicious/noExplicitAny: a Compose object, checked by the schema first
  deploy?: any;
}
interface ComposeFile {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
}

/**
 * The file as `docker compose` reads it with the shell's variables `env`: YAML merge keys
 * applied, `${VAR}` and `${VAR:-default}` replaced, `$$` a literal `$`. Any other form fails.
 */
function load(env: Record<string, string> = {}): ComposeFile {
  const text = readFileSync(FILE, 'utf8').replace(
    /\$\$|\$\{([A-Z0-9_]+)(?::-([^}]*))?\}|\$/g,
    (all, name, fallback) => {
      if (all === '$$') return '$';
      if (!name) throw new Error('a lone $ (a literal one is written $$)');
      return env[name] || fallback || '';
    },
  );
  return parse(text, { merge: true }) as ComposeFile;
}

// The schema names draft 07 by its https address, which Ajv does not know as its draft-07 meta-schema
// (http): the schema itself is not validated, the file is.
const validate = new Ajv({
  strict: false,
  allErrors: true,
  validateFormats: false,
  validateSchema: false,
}).compile(SCHEMA);
function schemaErrors(file: unknown): string[] {
  return validate(file)
    ? []
    : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`);
}

/** The layouts: all roles in the imagegen container, or API and docs there with a worker beside it. */
const LAYOUTS: { name: string; env: Record<string, string>; profiles: string[] }[] = [
  { name: 'all in one', env: {}, profiles: [] },
  { name: 'split', env: { IMAGEGEN_ROLES: 'api,docs' }, profiles: ['split'] },
];

/** The imagegen containers a layout starts (a service with profiles starts only when one is named). */
function imagegenServices(file: ComposeFile, profiles: readonly string[]): [string, Service][] {
  return Object.entries(file.services).filter(
    ([, s]) =>
      s.image.startsWith('registry.example.com/imagegen:') &&
      (!s.profiles || s.profiles.some((p) => profiles.includes(p))),
  );
}

describe('the Docker Compose file', () => {
  it('runs imagegen, PostgreSQL, MinIO (with its bucket) and ComfyUI', () => {
    expect(Object.keys(load().services).sort()).toEqual([
      'bucket',
      'comfyui',
      'imagegen',
      'imagegen-worker',
      'minio',
      'postgres',
    ]);
  });

  it.each(LAYOUTS)('validates against the Compose Specification: $name', ({ env }) => {
    expect(schemaErrors(load(env))).toEqual([]);
  });

  it('is checked strictly: a misspelt field or a wrong type is refused', () => {
    const misspelt = load();
    const { healthcheck, ...rest } = misspelt.services.imagegen!;
    misspelt.services.imagegen = { ...rest, healthceck: healthcheck } as Service;
    expect(schemaErrors(misspelt).join('\n')).toContain('healthceck');
    const wrongType = load();
    (wrongType.services.postgres as unknown as Record<string, unknown>).ports = 'all';
    expect(schemaErrors(wrongType).join('\n')).toContain('/services/postgres/ports must be array');
  });

  it('gives imagegen only documented settings that the program reads', () => {
    const documented = documentedSettings();
    const source = programSource();
    const set = new Set<string>();
    for (const [, service] of imagegenServices(load(), ['split']))
      for (const name of Object.keys(service.environment ?? {})) set.add(name);
    expect(set.size).toBeGreaterThan(15);
    for (const name of set) {
      if (SDK_VARIABLES.includes(name)) continue;
      expect(documented.has(name), `${name} is in README's configuration table`).toBe(true);
      expect(source.includes(name), `${name} is read by the program`).toBe(true);
    }
  });

  it.each(LAYOUTS)(
    'gives values the program accepts, and runs every role once: $name',
    ({ env, profiles }) => {
      const roles: string[] = [];
      for (const [name, service] of imagegenServices(load(env), profiles)) {
        const settings = service.environment!;
        const config = readStartConfig(settings);
        roles.push(...config.roles);
        expect(config.apiHost, name).toBe('0.0.0.0');
        expect(blobStoreFromEnv(settings), name).toBeInstanceOf(S3BlobStore);
        const servers = parseServerList(settings.COMFYUI_URLS);
        expect(servers.length, name).toBeGreaterThan(0);
        expect(parseModelsDir(settings.COMFYUI_MODELS_DIR, servers)?.shared, name).toBe('/models');
        expect(Object.keys(parseCheckpoints(settings.COMFYUI_CHECKPOINTS))).toEqual(['sd1.5', 'sdxl']);
        expect(() => engineConfigFromEnv(settings, [])).not.toThrow();
      }
      expect(roles.sort()).toEqual(['api', 'docs', 'webhooks', 'worker']);
    },
  );

  it.each(LAYOUTS)(
    'checks each imagegen container’s health where it answers, and gives it time to drain: $name',
    ({ env, profiles }) => {
      for (const [name, service] of imagegenServices(load(env), profiles)) {
        const config = readStartConfig(service.environment!);
        const healthPort = config.roles.has('api') ? config.apiPort : config.healthPort;
        expect(service.healthcheck!.test.join(' '), name).toContain(
          `http://127.0.0.1:${healthPort}/health/ready`,
        );
        const grace = Number(service.stop_grace_period!.replace(/s$/, ''));
        expect(grace, name).toBeGreaterThanOrEqual(config.shutdownGraceMs / 1000 + 5);
        if (config.roles.has('api'))
          expect(service.ports, name).toContain(`${config.apiPort}:${config.apiPort}`);
        if (config.roles.has('docs'))
          expect(service.ports, name).toContain(`${config.docsPort}:${config.docsPort}`);
      }
    },
  );

  it('connects the parts: database, bucket and credentials, ComfyUI on the GPU, one models folder', () => {
    const env = {
      POSTGRES_PASSWORD: 'pg-secret',
      MINIO_ROOT_USER: 'keeper',
      MINIO_ROOT_PASSWORD: 's3-secret',
    };
    const { services } = load(env);
    const settings = services.imagegen!.environment!;
    const database = new URL(settings.DATABASE_URL!);
    expect([
      database.hostname,
      database.port,
      database.username,
      database.password,
      database.pathname,
    ]).toEqual([
      'postgres',
      '5432',
      services.postgres!.environment!.POSTGRES_USER,
      'pg-secret',
      `/${services.postgres!.environment!.POSTGRES_DB}`,
    ]);
    expect(services.postgres!.environment!.POSTGRES_PASSWORD).toBe('pg-secret');
    expect(new URL(settings.S3_ENDPOINT!).hostname).toBe('minio');
    expect([settings.AWS_ACCESS_KEY_ID, settings.AWS_SECRET_ACCESS_KEY]).toEqual(['keeper', 's3-secret']);
    expect(services.minio!.environment).toEqual({
      MINIO_ROOT_USER: 'keeper',
      MINIO_ROOT_PASSWORD: 's3-secret',
    });
    expect(services.bucket!.entrypoint!.join(' ')).toContain(
      `mc mb --ignore-existing store/${settings.S3_BUCKET}`,
    );
    // The API streams files: MinIO is published to nobody.
    expect(settings.FILES_VIA).toBe('proxy');
    expect(services.minio!.ports).toBeUndefined();

    const [server] = parseServerList(settings.COMFYUI_URLS);
    expect(new URL(server!.url).hostname).toBe('comfyui');
    expect(new URL(server!.url).port).toBe('8188');
    expect(services.comfyui!.deploy.resources.reservations.devices).toEqual([
      { driver: 'nvidia', count: 'all', capabilities: ['gpu'] },
    ]);
    const hostFolder = (service: Service, inside: string) =>
      service.volumes!.find((v) => v.endsWith(`:${inside}`))?.split(':')[0];
    const models = hostFolder(services.comfyui!, '/root/ComfyUI/models');
    expect(models).toBeDefined();
    for (const [name, service] of imagegenServices(load(), ['split'])) {
      expect(hostFolder(service, service.environment!.COMFYUI_MODELS_DIR!), name).toBe(models);
      expect(service.depends_on, name).toMatchObject({
        postgres: { condition: 'service_healthy' },
        bucket: { condition: 'service_completed_successfully' },
      });
    }
  });

  it('runs the program from the image the manifests name, and says how to build it', () => {
    const text = readFileSync(FILE, 'utf8');
    expect(text).toContain('docker build -t registry.example.com/imagegen:1.0.0 .');
    for (const [name, service] of imagegenServices(load(), ['split'])) {
      expect(service.image, name).toBe('registry.example.com/imagegen:1.0.0');
      expect(service.command!.at(-1), name).toBe('packages/app/dist/src/start.js');
      expect(missingProgramFiles(service.command!), name).toEqual([]);
    }
  });
});
