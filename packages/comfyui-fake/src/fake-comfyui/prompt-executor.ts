import { createHash } from 'node:crypto';
import type { ApiPrompt, FileRef, ObjectInfo } from '@imagegen/engine-comfyui/engine';
import { ExecutionOrder, linkSource } from './execution-order.ts';
import { renderPreview } from './fake-images.ts';
import { fakeLora } from './fake-lora.ts';
import type { FileStore } from './file-store.ts';
import { GraphShapes, type Picture, RuntimeFailure } from './graph-shapes.ts';
import type { HistoryEntry, PromptQueue, QueueItem } from './prompt-queue.ts';
import { wireItem } from './prompt-queue.ts';
import { PREVIEW_IMAGE, PREVIEW_IMAGE_WITH_METADATA, type SocketHub } from './socket-hub.ts';

/**
 * The fake's prompt worker (main.py prompt_worker + execution.py PromptExecutor): one prompt at a
 * time, in queue order, with the real server's messages in the real server's order. Nodes "run"
 * in no time except samplers, which take `stepDelayMs` per step and report each step, and
 * TrainLoraNode, which takes as long per training step. The output cache works as ComfyUI's
 * default one: a node whose class, inputs and ancestors are unchanged since the previous prompt is
 * not run again, and an unchanged output node hands back its old files.
 *
 * Training as ComfyUI 0.3.64 runs it (`comfy_extras/nodes_train.py`): its TrainSampler steps under
 * a console progress bar only, so the node sends no `progress` message and sees no interrupt until
 * it ends (ComfyUI checks one before each node and at each progress report); an interrupt then
 * stops the prompt before the next node. `trainingStepProgress` plays a later release, whose
 * TrainSampler updates a ProgressBar per optimiser step: `progress` messages, and an interrupt
 * seen at the step. SaveLoRANode writes the LoRA into the output folder and reports nothing.
 */

/**
 * What a fault does at a sampler step: `stall` makes that step last until `resume()`, an interrupt
 * or a restart.
 */
export type StepAction = 'drop-websocket' | 'silence' | 'restart' | 'die' | 'stall';

/** The switches the executor reads (set through the fake's `faults`). */
export interface ExecutionFaults {
  stepDelayMs: number;
  /** Preview frames after each sampler step; `without-metadata`: never event 4 (an older server). */
  previews: boolean | 'without-metadata';
  /** TrainLoraNode reports each step (a later ComfyUI) instead of none (0.3.64). */
  trainingStepProgress: boolean;
  afterStep: { step: number; action: StepAction } | undefined;
  /** The node raises as it starts, or after `atStep` of its steps (a training that fails midway). */
  failNode: NodeFailure | undefined;
  /**
   * ComfyUI's garbage collection after a prompt (main.py's prompt_worker: `gc.collect()` at most
   * every `everyMs`, holding Python's lock): for `pauseMs` the server answers nothing and starts no
   * prompt. Absent: none.
   */
  collection: { pauseMs: number; everyMs: number } | undefined;
}

/** A node that raises when it runs (the fake's execution_error). */
export interface NodeFailure {
  readonly classType?: string;
  readonly node?: string;
  readonly atStep?: number;
  readonly exceptionType: string;
  readonly message: string;
  /** What ComfyUI appends to the exception's text (execution.py: its out-of-memory tips). */
  readonly tips?: string;
  /** Fails this many times, then no more; absent: until switched off. */
  times?: number;
  /** Fails until `POST /free` frees the memory (an out-of-memory the server never recovers from alone). */
  readonly untilFreed?: boolean;
}

export interface ExecutionRecord {
  readonly promptId: string;
  readonly clientId: string | undefined;
  /** performance.now() when the worker took it, and when it ended. */
  readonly startedAt: number;
  endedAt?: number;
  status?: 'success' | 'error' | 'interrupted';
}

interface CacheEntry {
  /** What an output node shows: saved images, or PreviewAny's text. */
  ui?: { images: FileRef[] } | { text: string[] };
}

class Interrupted extends Error {}
/** The process went away (restart, death): the prompt ends with no message and no history. */
class Abandoned extends Error {}

export class PromptExecutor {
  /** The client of the prompt that runs or ran last (ComfyUI keeps it after the prompt). */
  clientId: string | undefined;
  /** The node that runs now, for a client that reconnects mid-prompt. */
  lastNodeId: string | undefined;
  readonly records: ExecutionRecord[] = [];
  private readonly cache = new Map<string, CacheEntry>();
  /** Whether the running prompt is held at a stalled step. */
  stalled = false;
  private interruptFlag = false;
  private wake: (() => void) | undefined;
  /** Whether the step being slept checks for interrupts (a 0.3.64 training step does not). */
  private wakeOnInterrupt = true;
  private generation = 0;
  private busy = false;
  /** `POST /free` calls that freed something. */
  frees = 0;
  /** While the server collects garbage: what every request waits for. */
  held: Promise<void> | undefined;
  /** Each garbage collection, when it began (performance.now()) and how long it held the server. */
  readonly collections: { startedAt: number; pauseMs: number }[] = [];
  private collectedAt: number | undefined;

  constructor(
    private readonly queue: PromptQueue,
    private readonly hub: SocketHub,
    private readonly files: FileStore,
    private readonly objectInfo: () => ObjectInfo,
    private readonly faults: ExecutionFaults,
    private readonly onStepAction: (action: StepAction) => void,
    /** Whether the process is hung: it runs nothing. */
    private readonly dead: () => boolean,
  ) {}

  /** Starts the next prompt when idle (after the current turn, so a POST is answered first). */
  pump(): void {
    if (this.busy) return;
    this.busy = true;
    setImmediate(() => {
      this.busy = false;
      if (this.queue.running || this.dead()) return;
      const item = this.queue.take();
      if (!item) return;
      const generation = this.generation;
      void this.execute(item, generation).then(
        () => this.collect().then(() => this.pump()),
        (error: unknown) => {
          if (!(error instanceof Abandoned)) throw error;
        },
      );
    });
  }

  /** `nodes.interrupt_processing()`: stops the running prompt at its next step or node. */
  interrupt(): void {
    this.interruptFlag = true;
    if (this.wakeOnInterrupt) this.wake?.();
  }

  /** Lets a prompt held at a stalled step go on, as if the step had just ended. */
  resume(): void {
    if (this.stalled) this.wake?.();
  }

  /** A new process: no cache, no running prompt; the running one stops where it is. */
  reset(): void {
    this.generation += 1;
    this.cache.clear();
    this.clientId = undefined;
    this.lastNodeId = undefined;
    this.interruptFlag = false;
    this.wake?.();
  }

  private async execute(item: QueueItem, generation: number): Promise<void> {
    const sid = typeof item.extraData['client_id'] === 'string' ? item.extraData['client_id'] : undefined;
    const record: ExecutionRecord = { promptId: item.promptId, clientId: sid, startedAt: performance.now() };
    this.records.push(record);
    this.interruptFlag = false;
    this.clientId = sid;
    const { prompt, promptId } = item;
    const signatures = signaturesOf(prompt, (id) =>
      prompt[id]?.class_type === 'LoadImage' ? this.files.inputHash(String(prompt[id]?.inputs['image'])) : '',
    );
    const run = new PromptRun(item, sid, this.hub, signatures);

    run.add('execution_start', { prompt_id: promptId }, false);
    const cached = Object.keys(prompt).filter((id) => this.cache.has(signatures[id]!));
    const live = new Set(Object.values(signatures));
    for (const signature of this.cache.keys()) if (!live.has(signature)) this.cache.delete(signature);
    run.add('execution_cached', { nodes: cached, prompt_id: promptId }, false);

    const objectInfo = this.objectInfo();
    const shapes = new GraphShapes(prompt, objectInfo, {
      inputImage: (name) => this.files.inputImage(name),
      signature: (id) => signatures[id]!,
    });
    const order = new ExecutionOrder(prompt, objectInfo, (id) => this.cache.has(signatures[id]!));
    for (const output of item.outputs) order.add(output);

    const executed: string[] = [];
    let ended: 'success' | 'error' | 'interrupted' = 'success';
    while (!order.done) {
      const id = order.next();
      try {
        await this.executeNode(run, id, signatures[id]!, shapes, generation);
      } catch (error) {
        if (error instanceof Abandoned) throw error;
        const node = { prompt_id: promptId, node_id: id, node_type: prompt[id]!.class_type, executed };
        if (error instanceof Interrupted) {
          ended = 'interrupted';
          run.add('execution_interrupted', node, true);
        } else {
          ended = 'error';
          const failure =
            error instanceof RuntimeFailure ? error : new RuntimeFailure('Exception', String(error));
          run.add(
            'execution_error',
            {
              ...node,
              exception_message: `${failure.message}\n${failure.tips}`,
              exception_type: failure.exceptionType,
              traceback: [`  File "fake-comfyui", in ${prompt[id]!.class_type}\n`],
              current_inputs: Object.fromEntries(
                Object.entries(prompt[id]!.inputs).map(([name, value]) => [name, [JSON.stringify(value)]]),
              ),
              current_outputs: Object.keys(prompt),
            },
            false,
          );
        }
        break;
      }
      executed.push(id);
      order.complete(id);
    }
    if (ended === 'success') run.add('execution_success', { prompt_id: promptId }, false);
    this.lastNodeId = undefined;

    const outputs: Record<string, unknown> = {};
    const meta: Record<string, unknown> = {};
    for (const id of Object.keys(prompt)) {
      const ui = this.cache.get(signatures[id]!)?.ui;
      if (!ui) continue;
      outputs[id] = ui;
      meta[id] = { node_id: id, display_node: id, parent_node: null, real_node_id: id };
    }
    const entry: HistoryEntry = {
      prompt: wireItem(item),
      outputs,
      status: {
        status_str: ended === 'success' ? 'success' : 'error',
        completed: ended === 'success',
        messages: run.messages,
      },
      meta,
    };
    this.queue.done(entry);
    record.endedAt = performance.now();
    record.status = ended;
    if (sid !== undefined) this.hub.send('executing', { node: null, prompt_id: promptId }, sid);
  }

  private async executeNode(
    run: PromptRun,
    id: string,
    signature: string,
    shapes: GraphShapes,
    generation: number,
  ): Promise<void> {
    const { prompt } = run.item;
    const node = prompt[id]!;
    const cached = this.cache.get(signature);
    if (cached) {
      // An output node whose graph did not change: its old files, without running.
      if (run.sid !== undefined) {
        run.send('executed', {
          node: id,
          display_node: id,
          output: cached.ui ?? null,
          prompt_id: run.item.promptId,
        });
      }
      run.progressState(id, { value: 1, max: 1, state: 'finished' });
      return;
    }
    run.progressState(id, { value: 0, max: 1, state: 'running' });
    if (run.sid !== undefined) {
      this.lastNodeId = id;
      run.send('executing', { node: id, display_node: id, prompt_id: run.item.promptId });
    }
    this.checkInterrupt();
    const failure = this.faults.failNode;
    const failing =
      failure && (failure.node === id || failure.classType === node.class_type) ? failure : undefined;
    if (failing && failing.atStep === undefined) throw this.raise(failing);
    shapes.outputs(id);

    const steps = samplerSteps(prompt, id);
    const reports = node.class_type !== 'TrainLoraNode' || this.faults.trainingStepProgress;
    for (let step = 1; step <= steps; step++) {
      await this.sleep(this.faults.stepDelayMs, generation, reports);
      if (reports) {
        this.checkInterrupt();
        run.progressState(id, { value: step, max: steps, state: 'running' });
        const preview = this.faults.previews ? await this.preview(shapes, id, step, generation) : undefined;
        const withMetadata =
          this.faults.previews !== 'without-metadata' && this.hub.wantsPreviewMetadata(run.sid);
        if (preview && withMetadata) run.previewWithMetadata(id, preview);
        run.send('progress', { value: step, max: steps, prompt_id: run.item.promptId, node: id });
        if (preview && !withMetadata) run.preview(preview);
      }
      if (failing?.atStep === step) throw this.raise(failing);
      const trigger = this.faults.afterStep;
      if (trigger && trigger.step === step) {
        this.faults.afterStep = undefined;
        this.onStepAction(trigger.action);
        if (generation !== this.generation || this.dead()) throw new Abandoned();
        if (trigger.action === 'stall') {
          this.stalled = true;
          try {
            await this.sleep(Number.POSITIVE_INFINITY, generation);
          } finally {
            this.stalled = false;
          }
          this.checkInterrupt();
        }
      }
    }

    const entry: CacheEntry = {};
    const definition = this.objectInfo()[node.class_type];
    if (node.class_type === 'SaveLoRANode') this.saveLora(run, node);
    else if (definition?.output_node) {
      const images = shapes.input(id, 'images');
      const ui = images
        ? { images: this.saveImages(node.class_type, node.inputs['filename_prefix'], images, run.pngText) }
        : node.class_type === 'PreviewAny'
          ? { text: [describedText(shapes, node.inputs['source'])] }
          : undefined;
      if (ui) {
        entry.ui = ui;
        if (run.sid !== undefined) {
          run.send('executed', { node: id, display_node: id, output: ui, prompt_id: run.item.promptId });
        }
      }
    }
    // A node that reported no step finishes at the 1 of 1 it started with.
    const reported = reports ? steps || 1 : 1;
    run.progressState(id, { value: reported, max: reported, state: 'finished' });
    this.cache.set(signature, entry);
  }

  /** The failure a node raises now; one of a counted few uses one up. */
  private raise(failure: NodeFailure): RuntimeFailure {
    if (failure.times !== undefined && --failure.times <= 0) this.faults.failNode = undefined;
    return new RuntimeFailure(failure.exceptionType, failure.message, failure.tips);
  }

  /**
   * `POST /free`: models unloaded, memory freed (`free_memory` also drops the output cache, as
   * `PromptExecutor.reset` does); an out-of-memory that waited for it ends.
   */
  free(flags: { unloadModels: boolean; freeMemory: boolean }): void {
    if (!flags.unloadModels && !flags.freeMemory) return;
    this.frees += 1;
    if (this.faults.failNode?.untilFreed) this.faults.failNode = undefined;
    if (flags.freeMemory) this.cache.clear();
  }

  /**
   * After a prompt, main.py's garbage collection when it is due (`collection`): the server holds
   * every answer and the next prompt for its pause, as `gc.collect()` holds Python's lock.
   */
  private async collect(): Promise<void> {
    const collection = this.faults.collection;
    if (!collection) return;
    const now = performance.now();
    if (this.collectedAt !== undefined && now - this.collectedAt <= collection.everyMs) return;
    this.collectedAt = now;
    let release = () => {};
    this.held = new Promise<void>((resolve) => {
      release = resolve;
    });
    this.collections.push({ startedAt: now, pauseMs: collection.pauseMs });
    await new Promise((resolve) => setTimeout(resolve, collection.pauseMs));
    this.held = undefined;
    release();
  }

  /** SaveLoRANode: the trained LoRA into the output folder; it answers no `ui`, so no one is told. */
  private saveLora(run: PromptRun, node: ApiPrompt[string]): void {
    const trainer = linkSource(node.inputs['lora']);
    const inputs = trainer === undefined ? {} : (run.item.prompt[trainer]?.inputs ?? {});
    const stepsFrom = linkSource(node.inputs['steps']);
    const steps = stepsFrom === undefined ? undefined : Number(run.item.prompt[stepsFrom]?.inputs['steps']);
    const lora = fakeLora(trainer === undefined ? '' : run.signatures[trainer]!, Number(inputs['rank'] ?? 8));
    this.files.saveModel(String(node.inputs['prefix']), steps, lora);
  }

  private saveImages(
    classType: string,
    prefix: unknown,
    images: Picture,
    text: Readonly<Record<string, string>>,
  ): FileRef[] {
    if (classType === 'SaveImage')
      return this.files.save('output', String(prefix ?? 'ComfyUI'), images, text);
    return this.files.save('temp', 'ComfyUI_temp_', images, text);
  }

  private async preview(shapes: GraphShapes, id: string, step: number, generation: number) {
    const latent = shapes.input(id, 'latent_image');
    if (!latent) return undefined;
    const jpeg = await renderPreview(latent, step);
    if (generation !== this.generation || this.dead()) throw new Abandoned();
    return jpeg;
  }

  private checkInterrupt(): void {
    if (!this.interruptFlag) return;
    this.interruptFlag = false;
    throw new Interrupted();
  }

  /** A step's time; a restart cuts it short, and an interrupt too where the step checks for one. */
  private async sleep(ms: number, generation: number, interruptible = true): Promise<void> {
    if (ms > 0) {
      this.wakeOnInterrupt = interruptible;
      await new Promise<void>((resolve) => {
        const timer = Number.isFinite(ms) ? setTimeout(done, ms) : undefined;
        function done() {
          clearTimeout(timer);
          resolve();
        }
        this.wake = done;
      });
      this.wake = undefined;
      this.wakeOnInterrupt = true;
    }
    if (generation !== this.generation || this.dead()) throw new Abandoned();
  }
}

/** The messages of one prompt: sent to its client, and kept for its history entry. */
class PromptRun {
  readonly messages: (readonly [string, unknown])[] = [];
  /**
   * What SaveImage writes into its PNGs (nodes_images.py, unless --disable-metadata): the graph as
   * `prompt`, and each key of the client's `extra_pnginfo` (the UI's `workflow`).
   */
  get pngText(): Record<string, string> {
    const extra = this.item.extraData['extra_pnginfo'];
    return {
      prompt: asciiJson(this.item.prompt),
      ...(extra && typeof extra === 'object'
        ? Object.fromEntries(Object.entries(extra).map(([key, value]) => [key, asciiJson(value)]))
        : {}),
    };
  }
  private readonly progress: Record<string, { value: number; max: number; state: string }> = {};

  constructor(
    readonly item: QueueItem,
    readonly sid: string | undefined,
    private readonly hub: SocketHub,
    /** Every node's cache signature: what a saved file's content is made from. */
    readonly signatures: Readonly<Record<string, string>>,
  ) {}

  /** add_message: history always; the socket when there is a client or the event is broadcast. */
  add(type: string, data: Record<string, unknown>, broadcast: boolean): void {
    const stamped = { ...data, timestamp: Date.now() };
    this.messages.push([type, stamped]);
    if (this.sid !== undefined || broadcast) this.hub.send(type, stamped, this.sid);
  }

  /** send_sync to the prompt's client (every client when it has none). */
  send(type: string, data: Record<string, unknown>): void {
    this.hub.send(type, data, this.sid);
  }

  /** Every node that started so far, with its state (comfy_execution/progress.py). */
  progressState(id: string, state: { value: number; max: number; state: string }): void {
    this.progress[id] = state;
    const promptId = this.item.promptId;
    const nodes = Object.fromEntries(
      Object.entries(this.progress).map(([node, { value, max, state: now }]) => [
        node,
        {
          value,
          max,
          state: now,
          node_id: node,
          prompt_id: promptId,
          display_node_id: node,
          parent_node_id: null,
          real_node_id: node,
        },
      ]),
    );
    this.send('progress_state', { prompt_id: promptId, nodes });
  }

  /** Event 1: a 4-byte image format (1 = JPEG), then the image. */
  preview(jpeg: Buffer): void {
    const format = Buffer.alloc(4);
    format.writeUInt32BE(1);
    this.hub.sendBinary(PREVIEW_IMAGE, Buffer.concat([format, jpeg]), this.sid);
  }

  /** Event 4: a 4-byte metadata length, the metadata JSON, then the image. */
  previewWithMetadata(id: string, jpeg: Buffer): void {
    const metadata = Buffer.from(
      JSON.stringify({
        node_id: id,
        prompt_id: this.item.promptId,
        display_node_id: id,
        parent_node_id: null,
        real_node_id: id,
        image_type: 'image/jpeg',
      }),
    );
    const length = Buffer.alloc(4);
    length.writeUInt32BE(metadata.length);
    this.hub.sendBinary(PREVIEW_IMAGE_WITH_METADATA, Buffer.concat([length, metadata, jpeg]), this.sid);
  }
}

/**
 * How many steps a sampler takes: KSampler its `steps`, KSamplerAdvanced the steps between
 * start and end, the custom samplers the steps of the scheduler that makes their sigmas,
 * TrainLoraNode its `steps` times its gradient accumulation (its TrainSampler's `total_steps`).
 */
export function samplerSteps(prompt: ApiPrompt, id: string): number {
  const node = prompt[id]!;
  const inputs = node.inputs;
  switch (node.class_type) {
    case 'KSampler':
      return Number(inputs['steps']);
    case 'KSamplerAdvanced': {
      const end = Math.min(Number(inputs['end_at_step']), Number(inputs['steps']));
      return Math.max(0, end - Number(inputs['start_at_step']));
    }
    case 'TrainLoraNode':
      return Number(inputs['steps']) * Number(inputs['grad_accumulation_steps'] ?? 1);
    case 'SamplerCustom':
    case 'SamplerCustomAdvanced': {
      const scheduler = linkSource(inputs['sigmas']);
      const steps = scheduler === undefined ? undefined : prompt[scheduler]?.inputs['steps'];
      return typeof steps === 'number' ? steps : 1;
    }
    default:
      return 0;
  }
}

/**
 * Cache signatures: a node's class and inputs, its links replaced by the linked node's signature
 * (so a change upstream changes everything below it), plus `extra` (a loaded file's hash).
 */
export function signaturesOf(prompt: ApiPrompt, extra: (id: string) => string): Record<string, string> {
  const signatures: Record<string, string> = {};
  const visiting = new Set<string>();
  const sign = (id: string): string => {
    const known = signatures[id];
    if (known) return known;
    if (visiting.has(id) || !prompt[id]) return `missing:${id}`;
    visiting.add(id);
    const node = prompt[id];
    const inputs = Object.keys(node.inputs)
      .sort()
      .map((name) => {
        const value = node.inputs[name];
        const from = linkSource(value);
        return [name, from === undefined ? value : [sign(from), (value as [string, number])[1]]];
      });
    const signature = createHash('sha256')
      .update(JSON.stringify([node.class_type, inputs, extra(id)]))
      .digest('hex');
    visiting.delete(id);
    signatures[id] = signature;
    return signature;
  };
  for (const id of Object.keys(prompt)) sign(id);
  return signatures;
}

/**
 * What PreviewAny shows (core `nodes_preview_any.py`: `{"ui": {"text": [value]}}`): the fake has
 * no captioning model, so a text value is a sentence naming the node that made it and the size of
 * the picture it read, deterministic per graph.
 */
function describedText(shapes: GraphShapes, source: unknown): string {
  const from = linkSource(source);
  if (from === undefined) return String(source);
  const picture = shapes.firstInputPicture(from);
  const seen = picture ? ` of a ${picture.width}x${picture.height} picture` : '';
  return `a description by ${shapes.classOf(from)}${seen}`;
}

/** JSON as Python's `json.dumps` writes it by default: every character past ASCII escaped. */
function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[\u007f-\uffff]/g,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
