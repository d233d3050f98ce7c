import { downloadUrl } from '../storage/blob-keys.ts';
import type { TaskRecord } from './types.ts';

/** The training states (queued, initialising, running, completed, failed) as `GET /train_model/v1/status/{id}` answers them. */
export type TrainingStatus = 'queued' | 'initialising' | 'running' | 'completed' | 'failed';

/**
 * Training states from the queue's: waiting is `queued`; claimed but before the engine's first
 * progress report (fetching photos, loading the base model) is `initialising`; after it,
 * `running`; then `completed` or `failed`. A retry after a lost worker is `queued` again.
 */
export function trainingStatus(task: Pick<TaskRecord, 'state' | 'progress'>): TrainingStatus {
  switch (task.state) {
    case 'queued':
      return 'queued';
    case 'running':
      return task.progress === null ? 'initialising' : 'running';
    case 'succeeded':
      return 'completed';
    case 'failed':
      return 'failed';
  }
}

/** What a pending task's status adds when it is known (queue-estimates.ts). */
export interface PendingEstimates {
  readonly queue_position?: number;
  readonly eta_seconds?: number;
}

/**
 * The body `GET <path>/status/{id}` answers for a task, in the contract's shapes; webhooks carry
 * this body too, with the task's id and path after it (taskWebhookBody).
 * - generation: PENDING (with the early links of queued_image_urls), SUCCESS with download_urls
 *   and its first link again as `image_url` (plus `image` where the request has `base64`,
 *   `prompt` for image2prompt, `notes` where the task ran otherwise than its request reads),
 *   FAILURE with error.
 * - load_model: PENDING, SUCCESS with model_id, FAILURE.
 * - training: queued/initialising/running, completed with model_id and duration, failed.
 * A pending answer adds `progress` once the engine reported some, and the `estimates` given.
 */
export function taskStatusBody(
  task: Pick<TaskRecord, 'kind' | 'state' | 'progress' | 'result' | 'error' | 'outputKeys' | 'input'>,
  publicUrl: string,
  estimates?: PendingEstimates,
): Record<string, unknown> {
  const urls = task.outputKeys.map((key) => downloadUrl(publicUrl, key));
  const result = task.result ?? {};
  if (task.kind === 'training') {
    const status = trainingStatus(task);
    if (status === 'completed') {
      return {
        status,
        model_id: result.model_id ?? null,
        training_duration_seconds: result.training_duration_seconds ?? 0,
      };
    }
    if (status === 'failed') return { status, error: task.error ?? 'training failed' };
    return addPendingFacts({ status }, task, estimates);
  }
  if (task.state === 'failed') return { status: 'FAILURE', error: task.error ?? 'task failed' };
  if (task.state !== 'succeeded') {
    const pending: Record<string, unknown> = { status: 'PENDING' };
    if (urls.length > 0) pending.download_urls = urls;
    return addPendingFacts(pending, task, estimates);
  }
  if (task.kind === 'load_model') return { status: 'SUCCESS', model_id: result.model_id ?? null };
  const body: Record<string, unknown> = { status: 'SUCCESS', download_urls: urls.length > 0 ? urls : null };
  if (urls.length > 0) body.image_url = urls[0];
  if (result.text !== undefined) body.prompt = result.text;
  if ('base64' in task.input) body.image = result.base64?.[0] ?? null;
  if (result.notes?.length) body.notes = result.notes;
  return body;
}

/**
 * The body of a task's webhook: its final status exactly as the status path answers it, then the
 * task's `id` (as the submission answered it) and `path` (the pipeline it was submitted to), so a
 * receiver with several tasks in flight knows which one ended. The status fields come first and
 * keep their names: a receiver written for the status body reads this one unchanged.
 */
export function taskWebhookBody(
  task: Parameters<typeof taskStatusBody>[0] & Pick<TaskRecord, 'id' | 'endpoint'>,
  publicUrl: string,
): Record<string, unknown> {
  return { ...taskStatusBody(task, publicUrl), id: task.id, path: task.endpoint };
}

function addPendingFacts(
  body: Record<string, unknown>,
  task: Pick<TaskRecord, 'state' | 'progress'>,
  estimates: PendingEstimates | undefined,
): Record<string, unknown> {
  // Progress is stored as a real: three decimals say all it knows.
  if (task.state === 'running' && task.progress !== null)
    body.progress = Math.round(task.progress * 1000) / 1000;
  if (estimates?.queue_position !== undefined) body.queue_position = estimates.queue_position;
  if (estimates?.eta_seconds !== undefined) body.eta_seconds = estimates.eta_seconds;
  return body;
}
