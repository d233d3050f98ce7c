/**
 * The client calls the playground makes. The SDK types each call by its path; the playground
 * picks the path at run time, so it sees the calls through this one untyped view.
 */
import {
  ApiError,
  AuthError,
  createClient,
  describeIssue,
  NetworkError,
  TaskFailedError,
  type TaskListEntry,
  type TaskPreview,
  ValidationError,
} from '@imagegen/client';

export type Status = Record<string, unknown> & { status: string };

export interface PlaygroundClient {
  submit(path: string, body: unknown): Promise<{ id: string }>;
  wait(
    path: string,
    id: string,
    options: {
      signal?: AbortSignal;
      onProgress?: (status: Status) => void;
      onPreview?: (preview: TaskPreview) => void;
    },
  ): Promise<Status>;
  cancel(path: string, id: string): Promise<Status>;
  status(path: string, id: string): Promise<Status>;
  tasks(query: { limit?: number; pipeline?: string }): Promise<{ tasks: TaskListEntry[] }>;
  uploadImages(files: readonly Blob[]): Promise<string[]>;
}

export type { TaskListEntry };

export function playgroundClient(baseUrl: string, apiKey: string): PlaygroundClient {
  // One retry: a reader waits at the screen, and a refused key must show at once.
  return createClient({ baseUrl, apiKey, retries: 1 }) as unknown as PlaygroundClient;
}

/** An answer that says the key is missing, unknown or not allowed. */
export function isRefusedKey(error: unknown): error is ApiError {
  return error instanceof AuthError;
}

/** What went wrong, in the API's own words where it answered. */
export function describeError(error: unknown): string {
  if (error instanceof ValidationError) return error.issues.map(describeIssue).join('\n');
  if (error instanceof TaskFailedError) return error.message;
  if (error instanceof ApiError) {
    return `HTTP ${error.status}: ${typeof error.detail === 'string' ? error.detail : JSON.stringify(error.detail)}`;
  }
  if (error instanceof NetworkError) return error.message;
  return error instanceof Error ? error.message : String(error);
}

export { TaskFailedError };
