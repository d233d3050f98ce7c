import { describe, expect, it } from 'vitest';
import { compileRequestValidator, endpointByPath, endpoints } from '../src/index.ts';
import { SPEC_PATHS } from './spec-tables.ts';

const DESIGNED_PATHS = [
  '/upload_images',
  '/upload_images/v1',
  '/sync_model/v1',
  '/models/v1',
  '/models/v1/{model_id}',
  '/images/v1',
  '/images/v1/{image_id}',
  '/subscription/v1',
  '/batches/v1/{batch_id}',
  '/webhook_secret/v1',
  '/tasks/v1',
  '/webhooks/v1/deliveries',
  '/webhooks/v1/deliveries/{delivery_id}/redeliver',
  '/usage/v1',
];

describe('the endpoint table', () => {
  it('holds every path of the API reference and every designed path', () => {
    for (const path of [...SPEC_PATHS, ...DESIGNED_PATHS]) expect(endpointByPath(path), path).toBeDefined();
  });

  it('gives every task-creating endpoint a status path under its own path', () => {
    const tasks = endpoints.filter(
      (e) => e.kind === 'generation' || e.kind === 'load_model' || e.kind === 'training',
    );
    for (const endpoint of tasks) {
      expect(endpoint.status?.path, endpoint.path).toMatch(
        new RegExp(`^${endpoint.path}/status/\\{\\w+\\}$`),
      );
    }
    expect(endpointByPath('/train_model/v1')?.status?.path).toBe('/train_model/v1/status/{training_id}');
  });

  it('gives every task-creating endpoint a cancel path and a status stream in the style of its status path', () => {
    const tasks = endpoints.filter((e) => e.status);
    expect(tasks.length).toBeGreaterThan(30);
    for (const task of tasks) {
      const param = /\{(\w+)\}$/.exec(task.status!.path)![1];
      const cancel = endpointByPath(`${task.path}/cancel/{${param}}`);
      expect(cancel, task.path).toMatchObject({ method: 'POST', kind: 'cancel', taskPath: task.path });
      expect(cancel?.request, task.path).toBeUndefined();
      expect(Object.keys(cancel?.responses ?? {}).sort(), task.path).toEqual(['200', '401', '404', '409']);
      const events = endpointByPath(`${task.status!.path}/events`);
      expect(events, task.path).toMatchObject({
        method: 'GET',
        kind: 'events',
        taskPath: task.path,
        responseMedia: 'text/event-stream',
      });
      expect(
        events?.headers?.map((header) => header.name),
        task.path,
      ).toEqual(['Last-Event-ID']);
      expect(
        task.headers?.map((header) => header.name),
        task.path,
      ).toEqual(['Prefer', 'Idempotency-Key', 'Cancel-After']);
    }
    expect(endpointByPath('/train_model/v1/cancel/{training_id}')?.responses[200]).toMatchObject({
      title: 'TrainFailureResponse',
    });
  });

  it('describes every path parameter: one required string per {name} of the path, and no other', () => {
    const operations = endpoints.flatMap((e) => (e.status ? [e, e.status] : [e]));
    for (const operation of operations) {
      const names = [...operation.path.matchAll(/\{([^}]+)\}/g)].map((m) => String(m[1]));
      const params = operation.params as
        | { properties: Record<string, { type: string; description?: string }>; required: string[] }
        | undefined;
      if (names.length === 0) {
        expect(params, operation.path).toBeUndefined();
        continue;
      }
      expect(Object.keys(params?.properties ?? {}), operation.path).toEqual(names);
      expect(params?.required, operation.path).toEqual(names);
      for (const name of names) {
        expect(params?.properties[name]?.type, `${operation.path} ${name}`).toBe('string');
        expect(params?.properties[name]?.description, `${operation.path} ${name}`).toBeTruthy();
      }
    }
  });

  it('uses unique operation ids', () => {
    const ids = endpoints.flatMap((e) => [e.operationId, ...(e.status ? [e.status.operationId] : [])]);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('has a valid example for every JSON request', () => {
    for (const endpoint of endpoints.filter((e) => e.request)) {
      const result = compileRequestValidator(endpoint)(structuredClone(endpoint.example));
      expect(result, endpoint.path).toMatchObject({ ok: true });
    }
  });

  it('answers the synchronous success shape exactly where the request has base64', () => {
    for (const endpoint of endpoints.filter((e) => e.kind === 'generation' && e.request)) {
      const hasBase64 = 'base64' in ((endpoint.request as { properties: object }).properties ?? {});
      const statusOk = JSON.stringify(endpoint.status?.responses[200]);
      expect(statusOk.includes('"image"'), endpoint.path).toBe(hasBase64);
    }
  });

  it('says which schema serves the paths the API reference leaves implicit', () => {
    const implicit: Record<string, string> = {
      '/generate/v1': 'SDGenPrompt',
      '/generate/v2': 'SDXLGenPrompt',
      '/generate/v3': 'StylePrompt',
      '/facelock/v1': 'FaceLockPrompt',
      '/facelock/v2': 'FaceLockPrompt',
      '/sd3/v1': 'SD35Prompt',
      '/sd3_5/v1': 'SD35Prompt',
      '/fashion_lower/v1': 'FashionLowerPrompt',
      '/fashion_dress/v1': 'FashionDressPrompt',
    };
    for (const [path, name] of Object.entries(implicit)) {
      const endpoint = endpointByPath(path);
      expect(endpoint?.requestName, path).toBe(name);
      expect(endpoint?.description, path).toContain(name);
    }
  });

  it('lists the image fields the worker must fetch', () => {
    expect(endpointByPath('/sd/inpainting/v1')?.imageFields).toEqual(
      expect.arrayContaining(['init_image', 'mask_image', 'control_image', 'ip_adapter_image']),
    );
    expect(endpointByPath('/faceswap/v1')?.imageFields).toEqual(['input_face', 'input_image']);
    expect(endpointByPath('/load_model/v1')?.imageFields).toEqual(['sample_images']);
    expect(endpointByPath('/sd/text2image/v1')?.imageFields).not.toContain('webhook');
  });
});
