import { describe, expect, it } from 'vitest';
import { InferencePool } from '../src/cpu/inference-pool.ts';

describe('InferencePool.close', () => {
  it('lets the running job finish and rejects the queued ones, instead of stopping onnxruntime mid-run', async () => {
    // Stopping a thread inside onnxruntime's run aborted the whole process ("terminate called
    // after throwing an instance of 'Napi::Error'"): this test's process would not survive it.
    const pool = new InferencePool(1);
    const blank = () => ({ data: new Uint8Array(64 * 64 * 3), width: 64, height: 64 });
    const running = pool.run('isnet-mask', { image: blank(), model: 'medium' }, { model: 'isnet-medium' });
    const queued = pool.run('isnet-mask', { image: blank(), model: 'medium' }, { model: 'isnet-medium' });
    const queuedOutcome = queued.then(
      () => 'resolved',
      (error: Error) => error.message,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    await pool.close();
    const mask = await running;
    expect(mask).toMatchObject({ width: 64, height: 64 });
    expect(await queuedOutcome).toBe('the inference pool is closed');
    await expect(pool.run('warm', { models: [] })).rejects.toThrow('the inference pool is closed');
  }, 60_000);
});
