import { workerData } from 'node:worker_threads';
import * as ort from 'onnxruntime-node';
import { readIsnetModel } from './model-files.ts';
import { widenFloat16Model } from './onnx-widen.ts';

/**
 * A short-lived thread (isnet-session.ts starts it) that writes ISNet's optimized graph into
 * `workerData.dir`: `isnet.onnx`, with its weights in `isnet.weights`. Widening the float16 weights
 * (onnx-widen.ts) leaves about 420 MB of buffers for the garbage collector, which a thread that
 * then only runs ISNet would hold for good; here they go when the thread ends.
 */
const { dir } = workerData as { dir: string };
const optimizer = await ort.InferenceSession.create(
  widenFloat16Model(await readIsnetModel('medium'), { keepOutputs: ['output'] }),
  {
    graphOptimizationLevel: 'all',
    optimizedModelFilePath: `${dir}/isnet.onnx`,
    // Errors only: onnxruntime warns that a saved `all` graph fits this machine only, which is the point.
    logSeverityLevel: 3,
    extra: { session: { optimized_model_external_initializers_file_name: 'isnet.weights' } },
  },
);
await optimizer.release();
