import { describe, expect, it } from 'vitest';
import { type TaskRecord, taskStatusBody, trainingStatus } from '../../src/tasks/index.ts';

const PUBLIC_URL = 'http://api.test';

function task(overrides: Partial<TaskRecord>): TaskRecord {
  return {
    id: '00000000-0000-4000-8000-000000000001',
    ownerId: '00000000-0000-4000-8000-000000000002',
    endpoint: '/sd/text2image/v1',
    kind: 'generation',
    input: {},
    state: 'queued',
    targetServer: null,
    targetPool: 'shared',
    batchId: null,
    attempts: 0,
    maxAttempts: 3,
    progress: null,
    progressMessage: null,
    result: null,
    error: null,
    outputKeys: [],
    createdAt: new Date(),
    startedAt: null,
    finishedAt: null,
    ...overrides,
  };
}

describe('status bodies', () => {
  it('answers PENDING while queued and while running', () => {
    expect(taskStatusBody(task({ state: 'queued' }), PUBLIC_URL)).toEqual({ status: 'PENDING' });
    expect(taskStatusBody(task({ state: 'running', attempts: 1 }), PUBLIC_URL)).toEqual({
      status: 'PENDING',
    });
  });

  it('answers the async success shape with absolute links, the first again as image_url, and null links when there are no images', () => {
    const done = task({ state: 'succeeded', outputKeys: ['k/0.png', 'k/1.png'], result: {} });
    expect(taskStatusBody(done, `${PUBLIC_URL}/`)).toEqual({
      status: 'SUCCESS',
      download_urls: ['http://api.test/files/k/0.png', 'http://api.test/files/k/1.png'],
      image_url: 'http://api.test/files/k/0.png',
    });
    expect(taskStatusBody(task({ state: 'succeeded', result: {} }), PUBLIC_URL)).toEqual({
      status: 'SUCCESS',
      download_urls: null,
    });
  });

  it("answers the task's notes after its links, only where it ran otherwise than its request reads", () => {
    const notes = [
      'guidance_scale: the loaded model takes no guidance (it is guidance-distilled, as Flux Schnell)',
    ];
    const noted = task({
      endpoint: '/generate/v3',
      state: 'succeeded',
      outputKeys: ['k/0.png'],
      result: { notes },
    });
    const body = taskStatusBody(noted, PUBLIC_URL);
    expect(body).toEqual({
      status: 'SUCCESS',
      download_urls: ['http://api.test/files/k/0.png'],
      image_url: 'http://api.test/files/k/0.png',
      notes,
    });
    expect(Object.keys(body).at(-1)).toBe('notes');
    const none = task({ state: 'succeeded', outputKeys: ['k/0.png'], result: { notes: [] } });
    expect(taskStatusBody(none, PUBLIC_URL)).not.toHaveProperty('notes');
    // A task that has not ended says nothing yet.
    expect(taskStatusBody(task({ state: 'running', result: { notes } }), PUBLIC_URL)).toEqual({
      status: 'PENDING',
    });
  });

  it('answers image_url only once the task succeeded: not with the early links of a pending task', () => {
    const early = task({ state: 'running', outputKeys: ['k/0.png'] });
    expect(taskStatusBody(early, PUBLIC_URL)).toEqual({
      status: 'PENDING',
      download_urls: ['http://api.test/files/k/0.png'],
    });
  });

  it('answers the synchronous shape with image_url before the base64 image', () => {
    const done = task({
      endpoint: '/bgremover/v1',
      input: { base64: true },
      state: 'succeeded',
      outputKeys: ['k/0.png'],
      result: { base64: ['iVBORw0KGgo='] },
    });
    expect(Object.entries(taskStatusBody(done, PUBLIC_URL))).toEqual([
      ['status', 'SUCCESS'],
      ['download_urls', ['http://api.test/files/k/0.png']],
      ['image_url', 'http://api.test/files/k/0.png'],
      ['image', 'iVBORw0KGgo='],
    ]);
  });

  it('answers the image-to-prompt shape with the prompt', () => {
    const done = task({
      endpoint: '/image2prompt/v1',
      state: 'succeeded',
      result: { text: 'a red fox in snow' },
    });
    expect(taskStatusBody(done, PUBLIC_URL)).toEqual({
      status: 'SUCCESS',
      download_urls: null,
      prompt: 'a red fox in snow',
    });
  });

  it('answers FAILURE with the error', () => {
    const failed = task({ state: 'failed', error: 'no engine serves /faceswap/v1' });
    expect(taskStatusBody(failed, PUBLIC_URL)).toEqual({
      status: 'FAILURE',
      error: 'no engine serves /faceswap/v1',
    });
  });

  it("answers load_model's completed shape", () => {
    const loaded = task({
      kind: 'load_model',
      endpoint: '/load_model/v1',
      state: 'succeeded',
      result: { model_id: 'ab12' },
    });
    expect(taskStatusBody(loaded, PUBLIC_URL)).toEqual({ status: 'SUCCESS', model_id: 'ab12' });
  });

  it('maps training onto queued, initialising, running, completed and failed', () => {
    const training = (overrides: Partial<TaskRecord>) =>
      task({ kind: 'training', endpoint: '/train_model/v1', ...overrides });
    expect(trainingStatus(training({ state: 'queued' }))).toBe('queued');
    expect(trainingStatus(training({ state: 'running', progress: null }))).toBe('initialising');
    expect(trainingStatus(training({ state: 'running', progress: 0 }))).toBe('running');
    expect(
      taskStatusBody(
        training({ state: 'succeeded', result: { model_id: 'cd34', training_duration_seconds: 61.5 } }),
        PUBLIC_URL,
      ),
    ).toEqual({ status: 'completed', model_id: 'cd34', training_duration_seconds: 61.5 });
    expect(
      taskStatusBody(training({ state: 'failed', error: 'images: too few photos' }), PUBLIC_URL),
    ).toEqual({
      status: 'failed',
      error: 'images: too few photos',
    });
  });
});
