/**
 * The caller's recent tasks, from the task listing (`GET /tasks/v1`), with the first image of each
 * that succeeded (from its status). Each reopens its request in the form (the listing answers the
 * request as the API validated it, the drawn seed included), and each image can fill an image
 * field of the pipeline on screen. A task that answers text (image2prompt) shows its prompt.
 */
import { type ReactNode, useEffect, useState } from 'react';
import styles from './Playground.module.css';
import {
  describeError,
  isRefusedKey,
  type PlaygroundClient,
  type TaskListEntry,
} from './playground-client.ts';

const RECENT = 12;

export interface GalleryItem {
  task: TaskListEntry;
  image?: string;
  /** The text an image2prompt task answered. */
  prompt?: string;
}

interface Props {
  client: PlaygroundClient | undefined;
  /** Changes when the list should be read again (a run ended). */
  refresh: number;
  imageFields: readonly string[];
  onReopen(task: TaskListEntry): void;
  onUseImage(field: string, url: string): void;
  onRefusedKey(message: string): void;
}

async function readGallery(client: PlaygroundClient): Promise<GalleryItem[]> {
  const { tasks } = await client.tasks({ limit: RECENT });
  return Promise.all(
    tasks.map(async (task) => {
      if (task.state !== 'succeeded') return { task };
      const status = await client.status(task.pipeline, task.id).catch(() => undefined);
      const urls = status?.download_urls;
      return {
        task,
        ...(Array.isArray(urls) && typeof urls[0] === 'string' ? { image: urls[0] } : {}),
        ...(typeof status?.prompt === 'string' ? { prompt: status.prompt } : {}),
      };
    }),
  );
}

export default function Gallery({
  client,
  refresh,
  imageFields,
  onReopen,
  onUseImage,
  onRefusedKey,
}: Props): ReactNode {
  const [items, setItems] = useState<GalleryItem[]>();
  const [problem, setProblem] = useState<string>();
  // biome-ignore lint/correctness/useExhaustiveDependencies: `refresh` is the signal to read again
  useEffect(() => {
    if (!client) return;
    let live = true;
    readGallery(client).then(
      (read) => {
        if (!live) return;
        setItems(read);
        setProblem(undefined);
      },
      (error: unknown) => {
        if (!live) return;
        if (isRefusedKey(error)) onRefusedKey(describeError(error));
        else setProblem(describeError(error));
      },
    );
    return () => {
      live = false;
    };
  }, [client, refresh, onRefusedKey]);

  return (
    <section className={styles.gallery} aria-labelledby="gallery-heading">
      <h2 id="gallery-heading">Your recent tasks</h2>
      {!client && <p>Enter your API key above to see your recent tasks.</p>}
      {problem && <p className={styles.error}>{problem}</p>}
      {client && items?.length === 0 && <p>No tasks yet: run one above.</p>}
      <ul className={styles.galleryList}>
        {items?.map(({ task, image, prompt }) => (
          <li key={task.id} className={styles.galleryItem} data-task-id={task.id}>
            {image ? (
              <img src={image} alt={`First output of ${task.pipeline} task ${task.id}`} loading="lazy" />
            ) : prompt !== undefined ? (
              <blockquote className={styles.galleryPrompt} data-testid="gallery-prompt">
                {prompt}
              </blockquote>
            ) : (
              <div className={styles.galleryPlaceholder}>{task.state}</div>
            )}
            <p className={styles.galleryMeta}>
              <code>{task.pipeline}</code>
              <br />
              {task.state} ·{' '}
              <time dateTime={task.created_at}>{new Date(task.created_at).toLocaleString()}</time>
            </p>
            <button
              type="button"
              className={`button button--sm button--secondary ${styles.galleryButton}`}
              onClick={() => onReopen(task)}
            >
              Open in form
              <span className="sr-only">
                {' '}
                ({task.pipeline}, {task.id})
              </span>
            </button>
            {image &&
              imageFields.map((field) => (
                <button
                  key={field}
                  type="button"
                  className={`button button--sm button--outline button--primary ${styles.galleryButton}`}
                  onClick={() => onUseImage(field, image)}
                >
                  Use as <code>{field}</code>
                  <span className="sr-only"> (output of task {task.id})</span>
                </button>
              ))}
          </li>
        ))}
      </ul>
    </section>
  );
}
