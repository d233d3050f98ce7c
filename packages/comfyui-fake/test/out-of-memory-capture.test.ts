import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createComfyClient } from '@imagegen/engine-comfyui/engine';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeComfyUI, readCapture, startFakeComfyUI } from '../src/fake-comfyui/index.ts';
import { OUT_OF_MEMORY_TIPS } from '../src/fake-comfyui/out-of-memory.ts';

/**
 * The fake's out-of-memory, held to ComfyUI's: the form execution.py writes (`"{ex}\n{tips}"`, the
 * exception's full type name), and, once `src/record-out-of-memory.ts` has recorded a real server
 * running out (its files in comfyui-captures/), that recording: same fields, same type, the
 * allocator's words, read by the client as an out-of-memory.
 */

const RECORDED = 'oom-get-history.json';
const recorded = existsSync(path.resolve(import.meta.dirname, '../comfyui-captures', RECORDED));

type Messages = [string, Record<string, unknown>][];
const failureOf = (messages: Messages) => messages.find(([event]) => event === 'execution_error')?.[1];

let fake: FakeComfyUI | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

/** Runs the recorded txt2img graph on the fake with an out-of-memory at its sampler; answers its messages. */
async function fakeOutOfMemory(device: 'cuda' | 'cpu'): Promise<Messages> {
  fake = await startFakeComfyUI({ stepDelayMs: 1 });
  fake.faults.outOfMemory({ device, times: 1 });
  const prompt = readCapture<{ request: { body: { prompt: Record<string, unknown> } } }>(
    'txt2img-01-post-prompt-txt2img-64.json',
  ).request.body.prompt;
  const promptId = crypto.randomUUID();
  const client = createComfyClient({ url: fake.url, name: 'fake' });
  await client
    .run(prompt as never, { promptId, outputNodes: ['9'], signal: AbortSignal.timeout(20_000) })
    .catch(() => {});
  await client.close();
  const history = (await (await fetch(`${fake.url}/history/${promptId}`)).json()) as Record<
    string,
    { status: { messages: Messages } }
  >;
  return history[promptId]!.status.messages;
}

describe("the fake's out-of-memory", () => {
  it("writes CUDA's as execution.py does: the exception, a newline, ComfyUI's tips; the full type name", async () => {
    const failure = failureOf(await fakeOutOfMemory('cuda'))!;
    expect(failure.exception_type).toBe('torch.OutOfMemoryError');
    expect(failure.exception_message).toBe(
      `${String(failure.exception_message).split('\n' + OUT_OF_MEMORY_TIPS)[0]}\n${OUT_OF_MEMORY_TIPS}`,
    );
    expect(String(failure.exception_message)).toMatch(
      /^Allocation on device 0 would exceed allowed memory\. \(out of memory\)\n/,
    );
  });

  it.skipIf(!recorded)('has the fields, type and allocator words of the recorded real server', async () => {
    const history = readFileSync(path.resolve(import.meta.dirname, '../comfyui-captures', RECORDED), 'utf8');
    const entry = Object.values(
      (JSON.parse(history) as { response: { body: Record<string, { status: { messages: Messages } }> } })
        .response.body,
    )[0]!;
    const real = failureOf(entry.status.messages)!;
    const fakeFailure = failureOf(await fakeOutOfMemory('cpu'))!;
    expect(Object.keys(fakeFailure).sort()).toEqual(Object.keys(real).sort());
    expect(fakeFailure.exception_type).toBe(real.exception_type);
    const words = /DefaultCPUAllocator: can't allocate memory: you tried to allocate \d+ bytes/;
    expect(String(real.exception_message)).toMatch(words);
    expect(String(fakeFailure.exception_message)).toMatch(words);
  });

  it.skipIf(!recorded)('said on the socket what its history says, as the fake does', async () => {
    const socket = readFileSync(
      path.resolve(import.meta.dirname, '../comfyui-captures', 'ws-transcript-oom.jsonl'),
      'utf8',
    )
      .split('\n')
      .filter(Boolean)
      .map((line) => (JSON.parse(line) as { text?: { type: string; data: Record<string, unknown> } }).text)
      .find((message) => message?.type === 'execution_error')!.data;
    const history = JSON.parse(
      readFileSync(path.resolve(import.meta.dirname, '../comfyui-captures', RECORDED), 'utf8'),
    ) as { response: { body: Record<string, { status: { messages: Messages } }> } };
    const real = failureOf(Object.values(history.response.body)[0]!.status.messages)!;
    expect({ ...socket, timestamp: 0 }).toEqual({ ...real, timestamp: 0 });
  });
});
