import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { ALL_NODE_PACKS, type NodePack, type ObjectInfo } from '@imagegen/engine-comfyui/engine';
import {
  capturedFeatures,
  capturedModelFolders,
  capturedModels,
  capturedObjectInfo,
  capturedRefusal,
  capturedSystemStats,
  objectInfoWithPacks,
  readCapture,
} from './captures.ts';
import { FileStore } from './file-store.ts';
import { answer, type FakeCounts, type RouteState } from './http-routes.ts';
import { LEGACY_MODEL_FOLDERS, withModelLists } from './model-lists.ts';
import { listModelsDir } from './models-dir.ts';
import { outOfMemoryFailure } from './out-of-memory.ts';
import {
  type ExecutionFaults,
  type ExecutionRecord,
  PromptExecutor,
  type StepAction,
} from './prompt-executor.ts';
import { PromptQueue } from './prompt-queue.ts';
import { SocketHub } from './socket-hub.ts';

/**
 * A FAKE ComfyUI server for tests and benchmarks: ComfyUI 0.3.64's HTTP routes and WebSocket
 * messages as recorded from a real server, its prompt validation, its queue, history and output
 * cache, and images of the size and count the graph asks for, drawn instead of diffused. Fault
 * switches make it slow, silent, cut off, restarted (history forgotten), refusing, or dead.
 */

export type { ExecutionRecord, StepAction };
/**
 * The recordings, for tests of what reads a real server's answers: the recorded node definitions
 * (alone, or with node packs' added) and any one recorded exchange.
 */
export { capturedObjectInfo, objectInfoWithPacks, readCapture };

export interface FakeComfyOptions {
  /**
   * Node definitions (default: the recorded server's `object_info.json` with the definitions of
   * `packs` added).
   */
  readonly objectInfo?: ObjectInfo;
  /**
   * The custom node packs installed (default: every pack in `comfyui-packs/`); `[]` is a bare
   * ComfyUI, which refuses a graph that uses a pack's node as an unknown class.
   */
  readonly packs?: readonly NodePack[];
  /**
   * Model files by folder (`checkpoints`, `loras`, `upscale_models`…): the loaders accept exactly
   * these. Folders left out keep the recorded server's files (`random-sd15.safetensors`,
   * `random-esrgan-x4-tiny.safetensors`).
   */
  readonly models?: Readonly<Record<string, readonly string[]>>;
  /**
   * A ComfyUI `models/` folder on disk (what COMFYUI_MODELS_DIR points at): its files are listed
   * and loadable too, read at every request, as a real server rescans its folders.
   */
  readonly modelsDir?: string;
  /** Time per sampler step (default 5 ms); 0 runs prompts in no time. */
  readonly stepDelayMs?: number;
  /**
   * Send a preview frame after each sampler step (a server started with `--preview-method`): with
   * its metadata (event 4) to a client that asked for it, as 0.3.64 does; `without-metadata`: as
   * an older server, a plain frame (event 1) whatever the client asked.
   */
  readonly previews?: boolean | 'without-metadata';
  /**
   * TrainLoraNode reports each training step as a `progress` message and stops at an interrupt
   * there, as ComfyUI releases after 0.3.64 do. Default: 0.3.64's training, which reports no step
   * and sees an interrupt only when the training ends.
   */
  readonly trainingStepProgress?: boolean;
  readonly name?: string;
}

export interface FakeFaults {
  /** Slows every sampler step to this many milliseconds. */
  slow(stepDelayMs: number): void;
  /** Runs prompts in no time (no step delay at all): the benchmark's mode. */
  zeroTime(): void;
  /** Cuts every WebSocket off now (clients may reconnect). */
  dropWebSockets(): void;
  /** While on, the sockets stay open but carry nothing (a silent stall). */
  silence(on: boolean): void;
  /** Does `action` once, when a running sampler reaches this step. */
  afterStep(step: number, action: StepAction): void;
  /** Lets a prompt held by `afterStep(n, 'stall')` go on from that step. */
  resume(): void;
  /** A restart: queue, history, cache and sockets are gone, the running prompt ends unrecorded. */
  restart(): void;
  /** Stops answering: requests and socket upgrades hang, the running prompt stops (restart() revives). */
  die(): void;
  /** Refuses every prompt with this 400 body (default: a recorded unknown-checkpoint refusal); false stops. */
  refuse(body?: unknown): void;
  /**
   * Makes a node (by id or class) raise when it runs, or after `atStep` of its steps (a sampler's,
   * a training's): an `execution_error`; undefined stops. `times`: only that many times.
   */
  failNode(match?: {
    node?: string;
    classType?: string;
    atStep?: number;
    exceptionType?: string;
    message?: string;
    times?: number;
  }): void;
  /**
   * Runs out of memory in a node (default: the first sampler, KSampler) the way ComfyUI 0.3.64
   * reports it (out-of-memory.ts): a CUDA out-of-memory with its tips, or (`device: 'cpu'`) a
   * CPU allocator failure. It goes on until `POST /free` unloads the models (`untilFreed`, the
   * default), or `times` times; false stops.
   */
  outOfMemory(
    options?: { node?: string; classType?: string; device?: 'cuda' | 'cpu'; times?: number } | false,
  ): void;
  /**
   * ComfyUI's garbage collection after a prompt (at most every `everyMs`, default 10 s as main.py):
   * for `pauseMs` the server answers nothing and starts no prompt; false stops.
   */
  collectGarbage(options: { pauseMs: number; everyMs?: number } | false): void;
  /**
   * `kill -9`: the port refuses connections, every open connection and socket is cut, and the
   * queue, history and cache are gone. `revive()` starts it again on the same port.
   */
  kill(): Promise<void>;
  /** Starts a killed server again on its port, empty (as a process that restarted). */
  revive(): Promise<void>;
}

export interface FakeCounters extends FakeCounts {
  /** The most prompts the fake held at once (running plus pending). */
  readonly maxQueue: number;
  readonly socketConnections: number;
  /** Sockets open now. */
  readonly openSockets: number;
  readonly restarts: number;
  /** `POST /free` calls that unloaded models or freed memory. */
  readonly frees: number;
}

export interface FakeComfyUI {
  readonly url: string;
  readonly name: string;
  readonly faults: FakeFaults;
  readonly counters: FakeCounters;
  /** Every prompt the worker took, in order, with when it started and ended. */
  readonly executions: readonly ExecutionRecord[];
  /** Whether a prompt is held now at a step `afterStep(n, 'stall')` named. */
  readonly stalled: boolean;
  close(): Promise<void>;
}

export async function startFakeComfyUI(options: FakeComfyOptions = {}): Promise<FakeComfyUI> {
  const recorded = capturedModels();
  const given = { ...recorded, ...options.models };
  const modelFiles = (): Record<string, readonly string[]> => {
    if (options.modelsDir === undefined) return given;
    const merged: Record<string, readonly string[]> = { ...given };
    for (const [folder, files] of Object.entries(listModelsDir(options.modelsDir))) {
      merged[folder] = [...new Set([...(given[folder] ?? []), ...files])];
    }
    return merged;
  };
  const files = new FileStore();
  const baseInfo = options.objectInfo ?? objectInfoWithPacks(options.packs ?? ALL_NODE_PACKS);
  let liveInfo: { version: string; info: ObjectInfo } | undefined;
  // The node definitions list the model files and the input folder: rebuilt when either changes.
  const objectInfo = (): ObjectInfo => {
    const models = modelFiles();
    const version = `${files.inputVersion}:${options.modelsDir === undefined ? '' : JSON.stringify(models)}`;
    if (liveInfo?.version !== version) {
      liveInfo = { version, info: withModelLists(baseInfo, recorded, models, files.inputNames()) };
    }
    return liveInfo.info;
  };

  const executionFaults: ExecutionFaults = {
    stepDelayMs: options.stepDelayMs ?? 5,
    previews: options.previews ?? false,
    trainingStepProgress: options.trainingStepProgress ?? false,
    afterStep: undefined,
    failNode: undefined,
    collection: undefined,
  };
  let dead = false;
  let killed = false;
  let restarts = 0;
  // What a dead server leaves hanging, cut when it restarts or closes.
  const hung = new Set<{ destroy(): void }>();

  const queue = new PromptQueue(() =>
    hub.send('status', { status: { exec_info: { queue_remaining: queue.remaining } } }),
  );
  const hub = new SocketHub((sid) => {
    const greeting: { type: string; data: unknown }[] = [
      { type: 'status', data: { status: { exec_info: { queue_remaining: queue.remaining } }, sid } },
    ];
    // A client that reconnects while its prompt runs is told the node that runs.
    if (executor.clientId === sid && executor.lastNodeId !== undefined) {
      greeting.push({ type: 'executing', data: { node: executor.lastNodeId } });
    }
    return greeting;
  }, capturedFeatures());
  const executor: PromptExecutor = new PromptExecutor(
    queue,
    hub,
    files,
    objectInfo,
    executionFaults,
    (action) => stepActions[action](),
    () => dead,
  );

  const counts: FakeCounts = {
    promptsReceived: 0,
    promptsQueued: 0,
    interrupts: 0,
    queueDeletes: 0,
    uploads: 0,
    views: 0,
    historyReads: 0,
  };
  const state: RouteState = {
    queue,
    executor,
    files,
    counts,
    objectInfo,
    get models() {
      return modelFiles();
    },
    // A folder a node pack adds (`ipadapter`) exists once the fake is given files for it; a legacy
    // name (`unet`) is listed under its current one, as ComfyUI's `/models` does.
    get folders() {
      return [
        ...new Set([
          ...capturedModelFolders(),
          ...Object.keys(modelFiles()).map((folder) => LEGACY_MODEL_FOLDERS[folder] ?? folder),
        ]),
      ];
    },
    systemStats: {
      ...capturedSystemStats(),
      system: { ...systemOf(capturedSystemStats()), argv: ['fake-comfyui'] },
    },
    features: capturedFeatures(),
    refusal: undefined,
    number: 0,
  };

  const restart = () => {
    restarts += 1;
    dead = false;
    executor.reset();
    queue.forget();
    state.number = 0;
    hub.silent = false;
    hub.dropAll();
    for (const connection of hung) connection.destroy();
    hung.clear();
  };
  const stepActions: Record<StepAction, () => void> = {
    'drop-websocket': () => hub.dropAll(),
    silence: () => {
      hub.silent = true;
    },
    restart,
    die: () => {
      dead = true;
    },
    stall: () => {},
  };

  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    if (dead) {
      hung.add(request.socket);
      return;
    }
    answer(state, request, response).catch((error: unknown) => {
      response.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' }).end(String(error));
    });
  });
  server.on('upgrade', (request: IncomingMessage, socket: Socket, head: Buffer) => {
    const path = new URL(request.url ?? '/', 'http://fake').pathname;
    if (dead) {
      hung.add(socket);
      return;
    }
    if (path !== '/ws' && path !== '/api/ws') socket.destroy();
    else hub.upgrade(request, socket, head);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;

  const faults: FakeFaults = {
    slow: (stepDelayMs) => {
      executionFaults.stepDelayMs = stepDelayMs;
    },
    zeroTime: () => {
      executionFaults.stepDelayMs = 0;
    },
    dropWebSockets: () => hub.dropAll(),
    silence: (on) => {
      hub.silent = on;
    },
    afterStep: (step, action) => {
      executionFaults.afterStep = { step, action };
    },
    resume: () => executor.resume(),
    restart: () => {
      restart();
      executor.pump();
    },
    die: () => stepActions.die(),
    refuse: (body) => {
      state.refusal = body === false ? undefined : (body ?? capturedRefusal());
    },
    failNode: (match) => {
      executionFaults.failNode = match && {
        ...match,
        exceptionType: match.exceptionType ?? 'RuntimeError',
        message: match.message ?? 'the fake was told to fail here',
      };
    },
    outOfMemory: (options) => {
      if (options === false) {
        executionFaults.failNode = undefined;
        return;
      }
      const failure = outOfMemoryFailure(options?.device ?? 'cuda');
      executionFaults.failNode = {
        ...(options?.node ? { node: options.node } : { classType: options?.classType ?? 'KSampler' }),
        ...failure,
        ...(options?.times === undefined ? { untilFreed: true } : { times: options.times }),
      };
    },
    collectGarbage: (options) => {
      executionFaults.collection = options === false ? undefined : { everyMs: 10_000, ...options };
    },
    kill: async () => {
      killed = true;
      restart();
      killed = true;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
    revive: async () => {
      if (!killed) return;
      killed = false;
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () => {
          server.off('error', reject);
          resolve();
        });
      });
    },
  };

  return {
    url,
    name: options.name ?? `fake-comfyui:${port}`,
    faults,
    get counters(): FakeCounters {
      return {
        ...counts,
        maxQueue: queue.maxLength,
        socketConnections: hub.connections,
        openSockets: hub.open,
        restarts,
        frees: executor.frees,
      };
    },
    executions: executor.records,
    get stalled() {
      return executor.stalled;
    },
    async close() {
      if (killed) return;
      dead = true;
      executor.reset();
      hub.close();
      for (const connection of hung) connection.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function systemOf(stats: Record<string, unknown>): Record<string, unknown> {
  return (stats['system'] ?? {}) as Record<string, unknown>;
}
