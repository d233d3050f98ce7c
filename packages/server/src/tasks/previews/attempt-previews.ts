import type { PreviewImage } from '@imagegen/engines';
import sharp from 'sharp';
import type { TaskRecord } from '../types.ts';
import { taskFields, type WorkerContext } from '../worker-context.ts';
import { deleteTaskPreview } from './sql/deleteTaskPreview.ts';
import { saveTaskPreview } from './sql/saveTaskPreview.ts';

/** A task's preview is stored and announced at most this often: about two a second. */
export const PREVIEW_INTERVAL_MS = 500;
/**
 * A preview larger than this is skipped. ComfyUI's are tens of kilobytes (its previews are at most
 * 512 px on a side); one of megabytes would cost every open stream far more than it shows.
 */
export const MAX_PREVIEW_BYTES = 1 << 20;

export interface AttemptPreviews {
  /** Keeps the engine's newest preview; it is stored when the interval allows. */
  preview(image: PreviewImage): void;
  /**
   * The attempt has run: nothing more is stored, a write in flight is waited for, and a preview
   * stored is deleted (the task's status says more from now on).
   */
  stop(): Promise<void>;
}

/**
 * The previews of one attempt: the newest is stored (as JPEG) for the task's status streams in
 * every API process, at most every `intervalMs`; the ones in between are dropped, so an engine
 * may report one at every step. Never slows the attempt: writes run beside it, one at a time.
 */
export function attemptPreviews(
  ctx: WorkerContext,
  task: TaskRecord,
  leaseOwner: string,
  intervalMs = PREVIEW_INTERVAL_MS,
): AttemptPreviews {
  let pending: PreviewImage | null = null;
  let writing: Promise<void> | null = null;
  let timer: NodeJS.Timeout | undefined;
  let lastWriteAt = Number.NEGATIVE_INFINITY;
  let stored = false;
  let stopped = false;
  let complained = false;
  const complain = (why: string) => {
    if (complained) return;
    complained = true;
    ctx.log(`task ${task.id}: a preview was dropped: ${why}`, taskFields(task));
  };

  const write = async (image: PreviewImage) => {
    const jpeg =
      image.contentType === 'image/jpeg'
        ? image.data
        : await sharp(image.data).jpeg({ quality: 85 }).toBuffer();
    if (jpeg.length > MAX_PREVIEW_BYTES)
      return complain(`${jpeg.length} bytes, more than ${MAX_PREVIEW_BYTES}`);
    const saved = await saveTaskPreview(ctx.pool, {
      taskId: task.id,
      leaseOwner,
      contentType: 'image/jpeg',
      image: jpeg,
    });
    stored ||= saved;
  };
  const flush = () => {
    timer = undefined;
    if (stopped || writing || !pending) return;
    const image = pending;
    pending = null;
    lastWriteAt = performance.now();
    writing = write(image)
      .catch((error: Error) => complain(error.message))
      .finally(() => {
        writing = null;
        schedule();
      });
  };
  const schedule = () => {
    if (stopped || !pending || writing || timer) return;
    const wait = lastWriteAt + intervalMs - performance.now();
    if (wait <= 0) flush();
    else timer = setTimeout(flush, wait);
  };

  return {
    preview(image) {
      if (stopped) return;
      pending = image;
      schedule();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      pending = null;
      await writing;
      if (stored) await deleteTaskPreview(ctx.pool, task.id).catch(() => {});
    },
  };
}
