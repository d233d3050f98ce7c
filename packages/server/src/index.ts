/**
 * @imagegen/server: the API and the queue worker, and `npm start` (src/cli/start.ts), which runs
 * them with the docs site in one process. What other parts of the repository (benchmarks, browser
 * tests, the client's tests) build on; everything else is internal. ARCHITECTURE.md (at the
 * repository root) walks a task through these modules.
 */
export { analyticsRoutes } from './analytics/analytics-routes.ts';
export { createOwner } from './auth/accounts.ts';
export { createAuthenticator } from './auth/authenticator.ts';
export { upsertServer } from './auth/sql/upsertServer.ts';
export { migrate, PRODUCT_MIGRATIONS } from './db/migrate.ts';
export { createImageFetcher } from './fetch/image-fetcher.ts';
export { createModelFetcher } from './fetch/model-fetcher.ts';
export { type ApiOptions, buildApi } from './http/api-app.ts';
export { HOT_PATH_BUDGET_US, HOT_PATH_HOOKS } from './http/hot-path.ts';
export { type RetentionPolicy, sweepExpired } from './retention/sweeper.ts';
export type { BlobStore } from './storage/blob-store.ts';
export { blobStoreFromEnv } from './storage/blob-store-from-env.ts';
export { LocalBlobStore } from './storage/local-blob-store.ts';
export { S3BlobStore } from './storage/s3-blob-store.ts';
export { startWorker, submitTask, TaskStatusReader, type WorkerOptions } from './tasks/index.ts';
export { startWebhookDispatcher } from './webhooks/webhook-dispatcher.ts';
export { enqueueWebhook } from './webhooks/webhook-outbox.ts';
export { signWebhook } from './webhooks/webhook-signing.ts';
