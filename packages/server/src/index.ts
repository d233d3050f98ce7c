/**
 * @imagegen/server: the API, the queue worker and the webhook dispatcher, and the `imagegen`
 * operator CLI (src/cli/main.ts). What other parts of the repository (the program that starts the
 * roles in @imagegen/app, benchmarks, browser tests, the client's tests) build on; everything else
 * is internal. ARCHITECTURE.md (at the repository root) walks a task through these modules.
 */
export { analyticsRoutes } from './analytics/analytics-routes.ts';
export { createFirstOwner, createOwner, ensureApiKey, firstOwner } from './auth/accounts.ts';
export { createAuthenticator } from './auth/authenticator.ts';
export { upsertServer } from './auth/sql/upsertServer.ts';
export { openDatabase } from './cli/database.ts';
export { ROLES, readStartConfig } from './cli/start-config.ts';
export { migrate, PRODUCT_MIGRATIONS } from './db/migrate.ts';
export { createImageFetcher, imageFetcherFromEnv } from './fetch/image-fetcher.ts';
export { createModelFetcher, modelFetcherFromEnv } from './fetch/model-fetcher.ts';
export { withStoredFiles } from './fetch/stored-files.ts';
export type { ApiOptions } from './http/api-app.ts';
export { type ApiParts, type ApiRole, type ApiSettings, buildApiRole } from './http/api-role.ts';
export { buildHealthApp } from './http/health-app.ts';
export { HOT_PATH_BUDGET_US, HOT_PATH_HOOKS } from './http/hot-path.ts';
export { OFF_LOOP_BODY_BYTES } from './http/large-bodies.ts';
export { endStalledConnectionsOnClose, type OpenConnections } from './http/open-connections.ts';
export type { Readiness } from './http/routes/health.ts';
export { lineLog, loggerFromEnv } from './observability/logger.ts';
export { metricsFromEnv } from './observability/metrics.ts';
export { metricsHandler, mountMetrics } from './observability/metrics-endpoint.ts';
export {
  DEFAULT_OPENAI_MODELS,
  type OpenAiModelTable,
  openAiModels,
  openAiSettingsFromEnv,
} from './openai/model-table.ts';
export { type RetentionPolicy, runRetentionSweeper, sweepExpired } from './retention/sweeper.ts';
export type { BlobStore } from './storage/blob-store.ts';
export { blobStoreFromEnv } from './storage/blob-store-from-env.ts';
export { LocalBlobStore } from './storage/local-blob-store.ts';
export { S3BlobStore } from './storage/s3-blob-store.ts';
export {
  promptEnhancerFromEnv,
  startWorker,
  submitTask,
  TaskStatusReader,
  taskLimitsFromEnv,
  type WorkerOptions,
} from './tasks/index.ts';
export { startWebhookDispatcher } from './webhooks/webhook-dispatcher.ts';
export { enqueueWebhook } from './webhooks/webhook-outbox.ts';
export { signWebhook } from './webhooks/webhook-signing.ts';
