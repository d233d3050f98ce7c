/**
 * Fake ComfyUI servers for bench/comfyui.ts, in a process of their own as a real ComfyUI runs on
 * its own machine: their validation, image making and HTTP serving are not the gateway's cost.
 * `tsx bench/comfyui-fakes-server.ts COUNT` prints one JSON line `{urls, names, pid}` once the
 * fakes listen, then answers one JSON line per JSON command read on stdin:
 *   {"op":"report"}          → {executions: [[{promptId, startedAt, endedAt}]], maxQueue: [n]}
 *   {"op":"clock"}           → {now}
 *   {"op":"slow","ms":50}    → {ok: true}   (every sampler step then takes that long)
 * Times are this process's performance.now(); `clock` lets the caller map them onto its own
 * clock (the two processes' time origins do not agree to the millisecond).
 * Closing stdin, or SIGTERM, stops the fakes.
 */
import { createInterface } from 'node:readline';
import { type FakeComfyUI, startFakeComfyUI } from '@imagegen/comfyui-fake';

const count = Number(process.argv[2] ?? 4);
const fakes: FakeComfyUI[] = [];
for (let n = 0; n < count; n++) fakes.push(await startFakeComfyUI({ stepDelayMs: 0, name: `fake-${n + 1}` }));

const answer = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);

const stop = async () => {
  await Promise.all(fakes.map((fake) => fake.close()));
  process.exit(0);
};
process.on('SIGTERM', () => void stop());

answer({ urls: fakes.map((fake) => fake.url), names: fakes.map((fake) => fake.name), pid: process.pid });
for await (const line of createInterface({ input: process.stdin })) {
  const command = JSON.parse(line) as { op: 'report' | 'clock' } | { op: 'slow'; ms: number };
  if (command.op === 'clock') {
    answer({ now: performance.now() });
  } else if (command.op === 'slow') {
    for (const fake of fakes) fake.faults.slow(command.ms);
    answer({ ok: true });
  } else {
    answer({
      executions: fakes.map((fake) =>
        fake.executions.map((record) => ({
          promptId: record.promptId,
          startedAt: record.startedAt,
          endedAt: record.endedAt,
        })),
      ),
      maxQueue: fakes.map((fake) => fake.counters.maxQueue),
    });
  }
}
await stop();
