/**
 * What the gateway adds to a backlog of prompts on one ComfyUI server, measured from both sides:
 * the server's own stamps of each prompt (`execution_start`, `execution_success` in `/history`,
 * its clock) and the gateway's of each task (prompt submitted, end seen, outputs downloaded, task
 * succeeded; recorded with the task by the comfyui engine, this machine's clock). The two clocks
 * must agree (one machine, or NTP): `server_to_gateway_ms_min` shows how far off they may be.
 *
 * The server is idle between two prompts for two kinds of reason, told apart by when the next
 * prompt was sent to it: before the one before ended (the gap is the server's own:
 * ComfyUI's prompt worker collects garbage at most every 10 s after a prompt, holding Python's
 * lock), or not yet (the gateway was late to send it). The last prompt's end to its task's
 * SUCCESS is split the same way: the server's wrap-up until the end was seen here, the downloads,
 * then storing and settling the task.
 */

export interface PromptTimes {
  readonly promptId: string;
  /** The server's `execution_start` and `execution_success` stamps (server clock, epoch ms). */
  readonly startedAt: number;
  readonly endedAt: number;
  /** POST /prompt sent (gateway clock, epoch ms). */
  readonly submittedAt: number;
  /** The end seen on the socket or in /history, the outputs downloaded, the task SUCCESS (gateway clock). */
  readonly endSeenAt: number;
  readonly outputsAt: number;
  readonly succeededAt: number;
}

export interface BacklogOverhead {
  readonly prompts: number;
  /** The prompts' own time, summed (server clock). */
  readonly busy_ms: number;
  /** From the first prompt's start to the last task's SUCCESS. */
  readonly wall_ms: number;
  /** What the wall time holds besides the prompts themselves, in percent of it. */
  readonly overhead_percent: number;
  /** Idle time between prompts whose next prompt was sent before the one before ended: the server's own. */
  readonly server_gaps_ms: readonly number[];
  /** Idle time between prompts whose next prompt was sent only after: the gateway's. */
  readonly gateway_gaps_ms: readonly number[];
  /** The last prompt's end to its task's SUCCESS, and its parts. */
  readonly last_end_to_success_ms: number;
  readonly last_end_to_seen_ms: number;
  readonly last_seen_to_outputs_ms: number;
  readonly last_outputs_to_success_ms: number;
  /** The smallest delay from a prompt's end (server clock) to its end seen here (gateway clock). */
  readonly server_to_gateway_ms_min: number;
}

const round = (ms: number) => Math.round(ms * 10) / 10;

/** The account of one backlog, its prompts in any order (one server: they ran one after another). */
export function backlogOverhead(times: readonly PromptTimes[]): BacklogOverhead {
  if (times.length === 0) throw new Error('a backlog of no prompt has no overhead');
  const prompts = [...times].sort((a, b) => a.startedAt - b.startedAt);
  const serverGaps: number[] = [];
  const gatewayGaps: number[] = [];
  for (let n = 1; n < prompts.length; n++) {
    const before = prompts[n - 1]!;
    const next = prompts[n]!;
    const gap = Math.max(0, next.startedAt - before.endedAt);
    (next.submittedAt <= before.endedAt ? serverGaps : gatewayGaps).push(round(gap));
  }
  const first = prompts[0]!;
  const last = prompts.at(-1)!;
  const busy = prompts.reduce((sum, prompt) => sum + (prompt.endedAt - prompt.startedAt), 0);
  const finished = Math.max(...prompts.map((prompt) => prompt.succeededAt));
  const wall = finished - first.startedAt;
  return {
    prompts: prompts.length,
    busy_ms: round(busy),
    wall_ms: round(wall),
    overhead_percent: round(((wall - busy) / wall) * 1000) / 10,
    server_gaps_ms: serverGaps,
    gateway_gaps_ms: gatewayGaps,
    last_end_to_success_ms: round(last.succeededAt - last.endedAt),
    last_end_to_seen_ms: round(last.endSeenAt - last.endedAt),
    last_seen_to_outputs_ms: round(last.outputsAt - last.endSeenAt),
    last_outputs_to_success_ms: round(last.succeededAt - last.outputsAt),
    server_to_gateway_ms_min: round(Math.min(...prompts.map((prompt) => prompt.endSeenAt - prompt.endedAt))),
  };
}

/** A prompt's `execution_start` and `execution_success` stamps from its `/history` entry on a server. */
export async function historyStamps(
  serverUrl: string,
  promptId: string,
): Promise<{ startedAt: number; endedAt: number }> {
  const url = new URL(
    `history/${encodeURIComponent(promptId)}`,
    serverUrl.endsWith('/') ? serverUrl : `${serverUrl}/`,
  );
  const body = (await (await fetch(url)).json()) as Record<
    string,
    { status?: { messages?: [string, { timestamp?: number }][] } }
  >;
  const messages = body[promptId]?.status?.messages ?? [];
  const stamp = (event: string) => messages.find(([name]) => name === event)?.[1].timestamp;
  const startedAt = stamp('execution_start');
  const endedAt = stamp('execution_success');
  if (startedAt === undefined || endedAt === undefined) {
    throw new Error(
      `prompt ${promptId} has no execution_start and execution_success in the server's history`,
    );
  }
  return { startedAt, endedAt };
}
