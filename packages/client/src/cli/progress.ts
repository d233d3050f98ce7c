import type { AnyStatus } from '../types.ts';

/**
 * How a running task shows while the command waits: on a terminal, one line redrawn in place with
 * a progress bar; anywhere else (a pipe, a log file), a plain line at each change. Both go to
 * stderr, so stdout carries only the result.
 */

export interface Output {
  write(text: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
}

export interface ProgressView {
  show(status: AnyStatus): void;
  /** Clears the bar (on a terminal) before the result is written. */
  end(): void;
}

const BAR_WIDTH = 24;

function seconds(value: number): string {
  return value < 90 ? `${Math.round(value)} s` : `${Math.round(value / 60)} min`;
}

/** `queued, 2 ahead, about 7 s left`: the facts a pending status carries, in words. */
export function describePending(status: AnyStatus): string {
  const facts = status as { progress?: number; queue_position?: number; eta_seconds?: number };
  const parts: string[] = [];
  if (facts.progress !== undefined) parts.push(`running ${Math.round(facts.progress * 100)}%`);
  else if (facts.queue_position !== undefined) {
    parts.push(facts.queue_position === 0 ? 'queued, next' : `queued, ${facts.queue_position} ahead`);
  } else parts.push(status.status === 'PENDING' ? 'pending' : status.status);
  if (facts.eta_seconds !== undefined) parts.push(`about ${seconds(facts.eta_seconds)} left`);
  return parts.join(', ');
}

export function progressView(output: Output, label: string): ProgressView {
  if (!output.isTTY) {
    let last = '';
    return {
      show(status) {
        const line = `${label}: ${describePending(status)}`;
        if (line !== last) output.write(`${line}\n`);
        last = line;
      },
      end() {},
    };
  }
  let drawn = false;
  return {
    show(status) {
      const progress = (status as { progress?: number }).progress ?? 0;
      const filled = Math.round(progress * BAR_WIDTH);
      const bar = `[${'█'.repeat(filled)}${'░'.repeat(BAR_WIDTH - filled)}]`;
      const line = `${label} ${bar} ${describePending(status)}`;
      // A terminal that does not say its width (a pseudo terminal without one) gets 100 columns.
      const width = output.columns || 100;
      output.write(`\r\x1b[2K${line.slice(0, Math.max(20, width - 1))}`);
      drawn = true;
    },
    end() {
      if (drawn) output.write('\r\x1b[2K');
      drawn = false;
    },
  };
}
