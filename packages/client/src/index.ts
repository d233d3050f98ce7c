/**
 * @imagegen/client: the imagegen API from TypeScript, typed from its contract. Runs on Node 20+,
 * in browsers and in edge runtimes (fetch and Web Crypto only); the Node-only helpers (files on
 * disk) are in `@imagegen/client/node`.
 */
export type { CheckedRequestOf } from './bounds-check.ts';
export {
  type CancelAfter,
  type ClientOptions,
  createClient,
  type ImagegenClient,
  type ReadOptions,
  type RunOptions,
  type SubmitOptions,
  type UploadFile,
  type WaitOptions,
} from './client.ts';
export {
  ApiError,
  AuthError,
  describeIssue,
  ImagegenError,
  NetworkError,
  TaskFailedError,
  TimeoutError,
  ValidationError,
  WebhookVerificationError,
} from './errors.ts';
export { hasEnded, hasFailed, hasSucceeded } from './task-states.ts';
export type * from './types.ts';
export { type VerifyWebhookOptions, verifyWebhook, type WebhookHeaders } from './webhook.ts';
