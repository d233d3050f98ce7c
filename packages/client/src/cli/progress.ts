import type { AnyStatus, TaskPreview } from '../types.ts';

/**
 * How a running task shows while the command waits: on a terminal, one line redrawn in place with
 * a progress bar; anywhere else (a pipe, a log file), a plain line at each change. Both go to
 * stderr, so stdout carries only the result. A preview of the picture (where the engine sends
 * them) is counted on the terminal's line, and said in a line of its own elsewhere.
 */

export interface Output {
  write(text: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
}

export interface ProgressView {
  show(status: AnyStatus): void;
  /** A preview of the picture arrived. */
  preview(preview: TaskPreview): void;
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

/** `preview 3 received (41 KB JPEG)`. */
export function describePreview(count: number, preview: TaskPreview): string {
  const bytes = Math.floor((preview.image.length * 3) / 4);
  const size = bytes < 1024 ? `${bytes} B` : `${Math.round(bytes / 1024)} KB`;
  const type = preview.content_type.replace(/^image\//, '').toUpperCase();
  return `preview ${count} received (${size} ${type})`;
}

export function progressView(output: Output, label: string): ProgressView {
  let previews = 0;
  if (!output.isTTY) {
    let last = '';
    return {
      show(status) {
        const line = `${label}: ${describePending(status)}`;
        if (line !== last) output.write(`${line}\n`);
        last = line;
      },
      preview(preview) {
        output.write(`${label}: ${describePreview(++previews, preview)}\n`);
      },
      end() {},
    };
  }
  let drawn = false;
  let shown: AnyStatus | undefined;
  return {
    preview() {
      previews++;
      if (shown) this.show(shown);
    },
    show(status) {
      shown = status;
      const progress = (status as { progress?: number }).progress ?? 0;
      const filled = Math.round(progress * BAR_WIDTH);
      const bar = `[${'█'.repeat(filled)}${'░'.repeat(BAR_WIDTH - filled)}]`;
      const seen = previews > 0 ? `, ${previews === 1 ? '1 preview' : `${previews} previews`}` : '';
      const line = `${label} ${bar} ${describePending(status)}${seen}`;
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
