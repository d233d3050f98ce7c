import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApi, endpointByPath, endpoints } from '../src/index.ts';
import { SPEC_PATHS } from './spec-tables.ts';

const run = promisify(execFile);
const require = createRequire(import.meta.url);

type Operation = {
  operationId?: string;
  summary?: string;
  description?: string;
  requestBody?: { content: Record<string, { example?: unknown }> };
  responses: Record<string, { content?: Record<string, { example?: unknown }> }>;
};

const doc = buildOpenApi({ serverUrl: 'https://api.imagegen.dev' });
const operations = Object.values(doc.paths).flatMap((item) => Object.values(item) as Operation[]);

/** Every schema the issue names, by its component name. */
const NAMED_SCHEMAS = [
  'Text2ImagePromptSD',
  'Text2ImagePromptSDXL',
  'Image2ImagePromptSD',
  'Image2ImagePromptSDXL',
  'InpaintingPromptSD',
  'InpaintingPromptSDXL',
  'ControlnetPromptSD',
  'ControlnetPromptSDXL',
  'SDGenPrompt',
  'SDXLGenPrompt',
  'SD35Prompt',
  'StableCascadePrompt',
  'StylePrompt',
  'InpaintAnythingPrompt',
  'FaceLockPrompt',
  'FaceSwapPrompt',
  'InstamodelPrompt',
  'ModelswitchPrompt',
  'FashionLowerPrompt',
  'FashionUpperPrompt',
  'FashionDressPrompt',
  'OutpaintingPrompt',
  'PhotomakerPrompt',
  'RelightPrompt',
  'LogoPrompt',
  'BgRemoverPrompt',
  'BgChangerPrompt',
  'Image2PromptRequest',
  'SuperresolutionPrompt',
  'UpscalerPrompt',
  'LoadModelPrompt',
  'SyncModelPrompt',
  'TrainModelPrompt',
  'Body_upload_images',
  'AcceptedResponse',
  'PendingResponse',
  'SyncTaskSuccessResponse',
  'AsyncTaskSuccessResponse',
  'TaskErrorResponse',
  'ValidationError',
  'HTTPValidationError',
  'HTTPError',
  'LoadModelCompletedResponse',
  'TrainAcceptedResponse',
  'TrainPendingResponse',
  'TrainSuccessResponse',
  'TrainFailureResponse',
  'UploadImagesResponse',
  'UserModel',
  'UserModelInfo',
  'UserImage',
  'ImageInfo',
  'UserSubscription',
];

describe('the OpenAPI document', () => {
  it('is OpenAPI 3.1.0 at API version 1.0.0', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0.0');
  });

  it('holds every path of the table, with status paths', () => {
    for (const path of SPEC_PATHS) {
      expect(doc.paths[path], path).toBeDefined();
      expect(
        doc.paths[path === '/train_model/v1' ? `${path}/status/{training_id}` : `${path}/status/{task_id}`],
      ).toBeDefined();
    }
    for (const endpoint of endpoints)
      expect(doc.paths[endpoint.path]?.[endpoint.method.toLowerCase()]).toBeDefined();
  });

  it('lists each alias path as the same operation under an operation id of its own', () => {
    const upload = doc.paths['/upload_images']?.post as Operation;
    const uploadV1 = doc.paths['/upload_images/v1']?.post as Operation;
    expect([upload.operationId, uploadV1.operationId]).toEqual(['upload_images', 'upload_images_v1']);
    expect(upload.description).toContain('Also served at `POST /upload_images/v1`.');
    expect(uploadV1.description).toMatch(/^The same operation as `POST \/upload_images`\./);
    expect(uploadV1.requestBody).toEqual(upload.requestBody);
    expect(uploadV1.responses).toEqual(upload.responses);

    const status = doc.paths['/load_model/v1/status/{task_id}']?.get as Operation;
    const printed = doc.paths['/load_model/status/{task_id}']?.get as Operation;
    expect(printed.operationId).toBe('load_model_status_by_task_id');
    expect(printed.responses).toEqual(status.responses);
    expect(endpointByPath('/upload_images/v1')).toBe(endpointByPath('/upload_images'));

    const ids = operations.map((operation) => operation.operationId);
    expect(new Set(ids).size, 'an operation id is used twice').toBe(ids.length);
  });

  it('holds every schema the issue names as a component', () => {
    for (const name of NAMED_SCHEMAS) expect(doc.components.schemas[name], name).toBeDefined();
  });

  it('names the 422 body as FastAPI does', () => {
    expect(doc.components.schemas.HTTPValidationError).toMatchObject({
      properties: { detail: { type: 'array', items: { $ref: '#/components/schemas/ValidationError' } } },
    });
    const t2i = doc.paths['/sd/text2image/v1']?.post as Operation;
    expect(JSON.stringify(t2i.responses['422'])).toContain('#/components/schemas/HTTPValidationError');
  });

  it('declares the API-Key header, or the key as a Bearer token, and requires one everywhere', () => {
    expect(doc.components.securitySchemes.APIKeyHeader).toEqual({
      type: 'apiKey',
      in: 'header',
      name: 'API-Key',
    });
    expect(doc.components.securitySchemes.HTTPBearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.security).toEqual([{ APIKeyHeader: [] }, { HTTPBearer: [] }]);
  });

  it('gives every operation an id, a summary, a description and an example', () => {
    for (const operation of operations) {
      expect(operation.operationId).toBeTruthy();
      expect(operation.summary, operation.operationId).toBeTruthy();
      expect(operation.description, operation.operationId).toBeTruthy();
      const requestExample = Object.values(operation.requestBody?.content ?? {}).some(
        (m) => m.example !== undefined,
      );
      const responseExample = Object.values(operation.responses['200']?.content ?? {}).some(
        (m) => m.example !== undefined,
      );
      expect(requestExample || responseExample, operation.operationId).toBe(true);
    }
  });

  it('documents the path and query parameters the endpoint table validates', () => {
    type Parameter = { name: string; in: string; required: boolean; schema: Record<string, unknown> };
    const parametersOf = (path: string) =>
      ((doc.paths[path]?.get as { parameters?: Parameter[] } | undefined)?.parameters ?? []).map(
        ({ name, in: where, required, schema }) => ({ name, in: where, required, schema }),
      );
    expect(parametersOf('/sd/text2image/v1/status/{task_id}')).toEqual([
      {
        name: 'task_id',
        in: 'path',
        required: true,
        schema: { type: 'string', description: 'The `id` the submission answered.' },
      },
    ]);
    expect(parametersOf('/images/v1')).toEqual([
      {
        name: 'limit',
        in: 'query',
        required: false,
        schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
      },
      {
        name: 'before',
        in: 'query',
        required: false,
        schema: { type: 'string', description: 'image_id cursor: answer images older than it.' },
      },
    ]);
  });

  it('documents the task-control additions: optional pending facts, headers, the event stream, 409', () => {
    const pending = doc.components.schemas.PendingResponse as { properties: object; required?: string[] };
    expect(Object.keys(pending.properties)).toEqual([
      'status',
      'download_urls',
      'progress',
      'queue_position',
      'eta_seconds',
    ]);
    expect(pending.required).toEqual(['status']);
    const submit = doc.paths['/sd/text2image/v1']?.post as { parameters: { name: string; in: string }[] };
    expect(submit.parameters.map((p) => `${p.in} ${p.name}`)).toEqual([
      'header Prefer',
      'header Idempotency-Key',
      'header Cancel-After',
    ]);
    const events = doc.paths['/sd/text2image/v1/status/{task_id}/events']?.get as Operation;
    expect(Object.keys(events.responses['200']?.content ?? {})).toEqual(['text/event-stream']);
    const cancel = doc.paths['/sd/text2image/v1/cancel/{task_id}']?.post as Operation;
    expect(cancel.requestBody).toBeUndefined();
    expect(cancel.responses['200']?.content?.['application/json']?.example).toEqual({
      status: 'FAILURE',
      error: 'cancelled by the caller',
    });
    expect(Object.keys(cancel.responses)).toContain('409');
    expect(doc.paths['/tasks/v1']?.get).toBeDefined();
  });
});

describe('Redocly CLI lint', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'contract-openapi-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('finds zero errors with its recommended rules', { timeout: 60_000 }, async () => {
    const file = join(dir, 'openapi.json');
    await writeFile(file, JSON.stringify(doc, null, 2));
    const cli = join(dirname(require.resolve('@redocly/cli/package.json')), 'bin', 'cli.js');
    // Lint exits non-zero on errors; the report says which.
    const result = await run(process.execPath, [cli, 'lint', file, '--format=json'], {
      cwd: dir,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      maxBuffer: 16 * 1024 * 1024,
    }).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
    const parsed = JSON.parse(result.stdout) as {
      totals: { errors: number };
      problems: { severity: string; message: string }[];
    };
    expect(parsed.problems.filter((p) => p.severity === 'error')).toEqual([]);
    expect(parsed.totals.errors).toBe(0);
  });
});
