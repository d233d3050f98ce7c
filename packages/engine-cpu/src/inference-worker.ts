import { createRequire } from 'node:module';
import os from 'node:os';
import { pathToFileURL } from 'node:url';
import { parentPort } from 'node:worker_threads';
import type * as tfTypes from '@tensorflow/tfjs';
import * as ort from 'onnxruntime-node';
import sharp from 'sharp';
import { alphaMatting } from './alpha-matting.ts';
import type {
  FaceBox,
  GrayImage,
  OpMap,
  OpName,
  RgbImage,
  WorkReply,
  WorkRequest,
} from './inference-protocol.ts';
import { createIsnetSession } from './isnet-session.ts';
import { esrganModelJson, humanModelsDir, humanNodeWasmEntry, tfjsWasmDir } from './model-files.ts';
import { tfjs, tfjsHeapBytes } from './tfjs-runtime.ts';

/**
 * One inference worker thread. Models (named in models.ts) load on first use and stay loaded for
 * the thread's life; the pool prefers a thread that already holds the model a job needs.
 */

const ISNET_SIZE = 1024;

/**
 * Inference threads run at a lower CPU priority than the process's main thread, so the API and the
 * queue worker answer at once even while every core computes. On Linux a priority set with pid 0
 * applies to the calling thread only, and threads it starts later (onnxruntime's) inherit it.
 */
const INFERENCE_NICE = 10;
try {
  os.setPriority(0, Math.max(os.getPriority(0), INFERENCE_NICE));
} catch {
  // Not permitted here (some containers): run at the normal priority.
}
/** Each model this thread has loaded, once per load: the pool reads it from every reply. */
const loads: string[] = [];
const cache = new Map<string, Promise<unknown>>();

/** Loads a model once per thread: jobs that need it while it loads wait for the same load. */
function once<T>(key: string, load: () => Promise<T>): Promise<T> {
  let entry = cache.get(key) as Promise<T> | undefined;
  if (!entry) {
    entry = load().then((value) => {
      loads.push(key);
      return value;
    });
    entry.catch(() => cache.delete(key));
    cache.set(key, entry);
  }
  return entry;
}

/** ISNet widened to float32 and cut down to the mask we read (onnx-widen.ts, isnet-session.ts). */
function isnet(): Promise<ort.InferenceSession> {
  return once('isnet-medium', createIsnetSession);
}

function esrgan(size: string, scale: number): Promise<tfTypes.LayersModel> {
  return once(`esrgan-${size}-x${scale}`, async () => {
    const tf = await tfjs();
    return tf.loadLayersModel(pathToFileURL(esrganModelJson(size as 'slim', scale as 2)).href);
  });
}

interface NsfwModel {
  classify(image: tfTypes.Tensor3D, topk?: number): Promise<{ className: string; probability: number }[]>;
}

function nsfw(): Promise<NsfwModel> {
  return once('nsfw', async () => {
    await tfjs();
    const nsfwjs = await import('nsfwjs');
    return (await nsfwjs.load('MobileNetV2')) as unknown as NsfwModel;
  });
}

interface HumanFace {
  box: [number, number, number, number];
  score: number;
  age?: number;
  gender?: string;
}
interface Human {
  load(): Promise<void>;
  warmup?(): Promise<unknown>;
  detect(input: tfTypes.Tensor): Promise<{ face: HumanFace[] }>;
}

/**
 * Loads @vladmandic/human's node-wasm build on the shared tfjs WASM runtime, from the model files
 * the package ships (file:// URLs), with every module off except those `modules` turns on.
 */
function loadHuman(key: string, modules: object): Promise<Human> {
  return once(key, async () => {
    await tfjs();
    const require = createRequire(import.meta.url);
    const { Human } = require(humanNodeWasmEntry()) as { Human: new (config: object) => Human };
    const instance = new Human({
      backend: 'wasm',
      wasmPath: `${tfjsWasmDir()}/`,
      modelBasePath: `${pathToFileURL(humanModelsDir()).href}/`,
      debug: false,
      cacheSensitivity: 0,
      filter: { enabled: false },
      face: { enabled: false },
      body: { enabled: false },
      hand: { enabled: false },
      object: { enabled: false },
      gesture: { enabled: false },
      segmentation: { enabled: false },
      ...modules,
    });
    await instance.load();
    return instance;
  });
}

/** Faces with mesh and description (age, gender, embedding), for preflight, face_mask and tags. */
function human(): Promise<Human> {
  return loadHuman('human', {
    async: true,
    face: {
      enabled: true,
      detector: { rotation: false, maxDetected: 20, minConfidence: 0.5, return: false },
      mesh: { enabled: true },
      iris: { enabled: false },
      description: { enabled: true },
      emotion: { enabled: false },
      antispoof: { enabled: false },
      liveness: { enabled: false },
    },
  });
}

/** A second instance with only CenterNet (COCO objects), for image2prompt. */
function objectDetector(): Promise<Human> {
  return loadHuman('human-objects', {
    object: { enabled: true, modelPath: 'centernet.json', minConfidence: 0.4, maxDetected: 20 },
  });
}

async function detectObjects(image: RgbImage): Promise<{ label: string; score: number }[]> {
  const tf = await tfjs();
  const model = await objectDetector();
  const input = tf.tensor4d(Float32Array.from(image.data), [1, image.height, image.width, 3]);
  try {
    const result = (await model.detect(input)) as unknown as { object: { label: string; score: number }[] };
    return result.object.map((o) => ({ label: o.label, score: o.score }));
  } finally {
    input.dispose();
  }
}

async function run<K extends OpName>(op: K, args: OpMap[K]['args']): Promise<OpMap[K]['result']> {
  switch (op) {
    case 'isnet-mask':
      return (await isnetMask(args as OpMap['isnet-mask']['args'])) as OpMap[K]['result'];
    case 'alpha-matting': {
      const a = args as OpMap['alpha-matting']['args'];
      return alphaMatting(a.image, a.mask) as OpMap[K]['result'];
    }
    case 'esrgan-patch':
      return (await esrganPatch(args as OpMap['esrgan-patch']['args'])) as OpMap[K]['result'];
    case 'nsfw':
      return (await nsfwScores((args as OpMap['nsfw']['args']).image)) as OpMap[K]['result'];
    case 'faces':
      return (await detectFaces((args as OpMap['faces']['args']).image)) as OpMap[K]['result'];
    case 'objects':
      return (await detectObjects((args as OpMap['objects']['args']).image)) as OpMap[K]['result'];
    case 'load':
      await Promise.all((args as OpMap['load']['args']).models.map(load));
      return null as OpMap[K]['result'];
    default:
      throw new Error(`unknown inference op ${String(op)}`);
  }
}

/** Loads a model by its name in models.ts. */
function load(model: string): Promise<unknown> {
  if (model === 'isnet-medium') return isnet();
  if (model === 'nsfw') return nsfw();
  if (model === 'human') return human();
  if (model === 'human-objects') return objectDetector();
  const m = /^esrgan-(slim|medium|thick)-x([234])$/.exec(model);
  if (m) return esrgan(m[1]!, Number(m[2]));
  throw new Error(`unknown model ${model}`);
}

async function isnetMask({ image }: OpMap['isnet-mask']['args']): Promise<GrayImage> {
  const session = await isnet();
  const resized = await sharp(image.data, { raw: { width: image.width, height: image.height, channels: 3 } })
    .resize(ISNET_SIZE, ISNET_SIZE, { fit: 'fill' })
    .raw()
    .toBuffer();
  const plane = ISNET_SIZE * ISNET_SIZE;
  const input = new Float32Array(3 * plane);
  for (let i = 0; i < plane; i++) {
    input[i] = resized[3 * i]! / 256 - 0.5;
    input[i + plane] = resized[3 * i + 1]! / 256 - 0.5;
    input[i + 2 * plane] = resized[3 * i + 2]! / 256 - 0.5;
  }
  const output = await session.run({
    input: new ort.Tensor('float32', input, [1, 3, ISNET_SIZE, ISNET_SIZE]),
  });
  const alpha = output.output!.data as Float32Array;
  const mask = Buffer.alloc(plane);
  for (let i = 0; i < plane; i++) mask[i] = Math.max(0, Math.min(255, Math.round(alpha[i]! * 255)));
  const back = await sharp(mask, { raw: { width: ISNET_SIZE, height: ISNET_SIZE, channels: 1 } })
    .resize(image.width, image.height, { fit: 'fill' })
    .extractChannel(0)
    .raw()
    .toBuffer();
  return {
    data: new Uint8Array(back.buffer, back.byteOffset, back.length),
    width: image.width,
    height: image.height,
  };
}

async function esrganPatch({ image, size, scale }: OpMap['esrgan-patch']['args']): Promise<RgbImage> {
  const tf = await tfjs();
  const model = await esrgan(size, scale);
  const out = tf.tidy(() => {
    const x = tf.tensor4d(Float32Array.from(image.data), [1, image.height, image.width, 3]);
    const y = model.predict(x) as tfTypes.Tensor4D;
    return y.clipByValue(0, 255).round().cast('int32');
  });
  const values = await out.data();
  out.dispose();
  return { data: Uint8Array.from(values), width: image.width * scale, height: image.height * scale };
}

async function nsfwScores(image: RgbImage): Promise<Record<string, number>> {
  const tf = await tfjs();
  const model = await nsfw();
  const input = tf.tensor3d(Int32Array.from(image.data), [image.height, image.width, 3], 'int32');
  try {
    const predictions = await model.classify(input, 5);
    return Object.fromEntries(predictions.map((p) => [p.className, p.probability]));
  } finally {
    input.dispose();
  }
}

async function detectFaces(image: RgbImage): Promise<FaceBox[]> {
  const tf = await tfjs();
  const model = await human();
  const input = tf.tensor4d(Float32Array.from(image.data), [1, image.height, image.width, 3]);
  try {
    const result = await model.detect(input);
    return result.face.map((f) => ({
      x: f.box[0],
      y: f.box[1],
      width: f.box[2],
      height: f.box[3],
      score: f.score,
      ...(f.age !== undefined ? { age: f.age } : {}),
      ...(f.gender !== undefined ? { gender: f.gender } : {}),
    }));
  } finally {
    input.dispose();
  }
}

function transferables(value: unknown): ArrayBuffer[] {
  if (
    value &&
    typeof value === 'object' &&
    'data' in value &&
    (value as RgbImage).data instanceof Uint8Array
  ) {
    const data = (value as RgbImage).data;
    const whole = data.byteOffset === 0 && data.byteLength === data.buffer.byteLength;
    return whole && data.buffer instanceof ArrayBuffer ? [data.buffer] : [];
  }
  return [];
}

parentPort!.on('message', (request: WorkRequest) => {
  run(request.op, request.args).then(
    (result) => {
      const reply: WorkReply = {
        id: request.id,
        ok: true,
        result,
        loads: [...loads],
        heapBytes: tfjsHeapBytes(),
      };
      parentPort!.postMessage(reply, transferables(result));
    },
    (error: unknown) => {
      const reply: WorkReply = {
        id: request.id,
        ok: false,
        error: error instanceof Error ? `${error.message}` : String(error),
        loads: [...loads],
        heapBytes: tfjsHeapBytes(),
      };
      parentPort!.postMessage(reply);
    },
  );
});
