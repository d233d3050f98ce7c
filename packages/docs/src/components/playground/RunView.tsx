/**
 * A task the playground runs: its state, place in the queue, progress and elapsed time while it
 * is pending (from the status stream, through the client), the picture as it forms where the
 * engine sends previews, a Cancel button, then its outcome: the images large with their size,
 * seed and the time taken, image2prompt's prompt as text, a model's id, or the failure in the
 * API's own words.
 */
import { type ReactNode, useEffect, useState } from 'react';
import styles from './Playground.module.css';
import type { Status } from './playground-client.ts';

export type RunPhase = 'submitting' | 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

export interface RunState {
  phase: RunPhase;
  pipeline: string;
  startedAt: number;
  endedAt?: number;
  id?: string;
  /** The last status read: the pending one while it runs, the final one after. */
  status?: Status;
  error?: string;
  /** The seed the task ran with (drawn by the API for -1), from the task listing. */
  seed?: number;
  /** The newest preview of the picture as it forms (a data: URL), where the engine sends them. */
  preview?: string;
}

const PHASE_TEXT: Record<RunPhase, string> = {
  submitting: 'Submitting',
  queued: 'Queued',
  running: 'Running',
  succeeded: 'Succeeded',
  failed: 'Failed',
  cancelled: 'Cancelled',
};

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

function useNow(active: boolean): number {
  const [now, setNow] = useState(Date.now);
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => setNow(Date.now()), 200);
    return () => clearInterval(timer);
  }, [active]);
  return now;
}

function OutputImage({
  url,
  index,
  count,
  seed,
  took,
}: {
  url: string;
  index: number;
  count: number;
  seed?: number;
  took: string;
}) {
  const [size, setSize] = useState<string>();
  const name = url.split('/').pop()?.split('?')[0] || `output-${index + 1}.png`;
  return (
    <figure className={styles.output}>
      <a href={url} target="_blank" rel="noreferrer">
        <img
          src={url}
          alt={`Output ${index + 1} of ${count}`}
          onLoad={(event) =>
            setSize(`${event.currentTarget.naturalWidth} × ${event.currentTarget.naturalHeight} px`)
          }
        />
      </a>
      <figcaption>
        <span data-testid="output-size">{size ?? '…'}</span>
        {seed !== undefined && <> · seed {seed}</>} · {took}{' '}
        <a className="button button--sm button--primary" href={url} download={name}>
          Download<span className="sr-only"> output {index + 1}</span>
        </a>
      </figcaption>
    </figure>
  );
}

export default function RunView({ run, onCancel }: { run: RunState; onCancel(): void }): ReactNode {
  const pending = run.phase === 'submitting' || run.phase === 'queued' || run.phase === 'running';
  const now = useNow(pending);
  const elapsed = (run.endedAt ?? now) - run.startedAt;
  const status: Record<string, unknown> = run.status ?? {};
  const progress = typeof status.progress === 'number' ? status.progress : undefined;
  const queuePosition = typeof status.queue_position === 'number' ? status.queue_position : undefined;
  const urls = Array.isArray(status.download_urls) ? (status.download_urls as string[]) : [];
  return (
    <section className={styles.run} aria-labelledby="run-heading">
      <h2 id="run-heading">Task</h2>
      <div role="status" aria-live="polite">
        <p>
          <strong data-testid="run-state">{PHASE_TEXT[run.phase]}</strong>
          {run.id && (
            <>
              {' '}
              · <code data-testid="task-id">{run.id}</code>
            </>
          )}
          {queuePosition !== undefined && pending && (
            <> · {queuePosition === 0 ? 'next in line' : `${queuePosition} ahead in the queue`}</>
          )}
        </p>
      </div>
      {pending && (
        <>
          <progress className={styles.progress} max={1} value={progress} aria-label="Progress">
            {progress === undefined ? '' : `${Math.round(progress * 100)} %`}
          </progress>
          <p>
            Elapsed <span data-testid="elapsed">{seconds(elapsed)}</span>
            {progress !== undefined && <> · {Math.round(progress * 100)} % done</>}{' '}
            <button
              type="button"
              className="button button--sm button--danger"
              onClick={onCancel}
              disabled={!run.id}
            >
              Cancel
            </button>
          </p>
          {run.preview && (
            <figure className={styles.preview}>
              <img src={run.preview} alt="Preview of the output as it forms" data-testid="run-preview" />
              <figcaption>Preview, as the picture forms</figcaption>
            </figure>
          )}
        </>
      )}
      {run.phase === 'succeeded' && (
        <>
          {typeof status.prompt === 'string' && (
            <blockquote className={styles.promptText} data-testid="prompt-text">
              {status.prompt}
            </blockquote>
          )}
          {typeof status.model_id === 'string' && (
            <p>
              Model id: <code>{status.model_id}</code>
            </p>
          )}
          <div className={styles.outputs}>
            {urls.map((url, index) => (
              <OutputImage
                key={url}
                url={url}
                index={index}
                count={urls.length}
                seed={run.seed}
                took={`took ${seconds(elapsed)}`}
              />
            ))}
          </div>
          {urls.length === 0 && <p>Took {seconds(elapsed)}.</p>}
        </>
      )}
      {(run.phase === 'failed' || run.phase === 'cancelled') && run.error && (
        <div className="alert alert--danger" role="alert">
          <pre className={styles.errorText}>{run.error}</pre>
        </div>
      )}
    </section>
  );
}
