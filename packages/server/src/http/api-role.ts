import type { FastifyInstance } from 'fastify';
import type { StartConfig } from '../cli/start-config.ts';
import { openAiSettingsFromEnv } from '../openai/model-table.ts';
import { taskLimitsFromEnv } from '../tasks/task-limits.ts';
import { redeliveryLimitsFromEnv } from '../webhooks/redelivery-limits.ts';
import { type ApiOptions, buildApi } from './api-app.ts';
import { authFailureLimitsFromEnv } from './api-key-auth.ts';
import { endStalledConnectionsOnClose, type OpenConnections } from './open-connections.ts';
import { type Readiness, registerHealthRoutes } from './routes/health.ts';
import { waitSetting } from './wait-setting.ts';

/** What a process's settings decide of its API; everything else is handed in as built parts. */
export type ApiSettings = Pick<StartConfig, 'publicUrl' | 'docsPort'>;

/**
 * The built parts the API runs on (the pool, the store, the engines...). The settings-dependent
 * options (`publicUrl`, the docs origins, the wrong-key allowances) are not among them: they come
 * from the settings, the same way for every caller; so do the OpenAI table, the waits, the input
 * image count and the redelivery limits, unless handed in.
 */
export type ApiParts = Omit<ApiOptions, 'publicUrl' | 'docsOrigins' | 'authFailureLimits'>;

export interface ApiRole {
  readonly app: FastifyInstance;
  /** What the API's open connections are doing, for a drain that waits on them. */
  readonly connections: OpenConnections;
}

/**
 * The API exactly as a process with the `api` role serves it: `npm start` and the test suites'
 * loopback API both build it here, so every route and plugin that the program registers for some
 * settings is registered for the same settings in tests too (the analytics collector for the
 * docs site's origins, /health/live and /health/ready, the drain's connection watch). A route
 * that only the program registered once hid a defect the suites could not see: the analytics
 * preflight turned every trailing-slash redirect into a 404.
 */
export async function buildApiRole(
  settings: ApiSettings,
  env: NodeJS.ProcessEnv,
  parts: ApiParts & { readiness: Readiness },
): Promise<ApiRole> {
  const { readiness, ...options } = parts;
  const app = await buildApi({
    ...options,
    publicUrl: settings.publicUrl,
    // The docs site (`npm start`'s docs role, on DOCS_PORT) posts its page views to the API.
    docsOrigins: [`http://localhost:${settings.docsPort}`, `http://127.0.0.1:${settings.docsPort}`],
    authFailureLimits: authFailureLimitsFromEnv(env),
    // The OpenAI Images API's model table (OPENAI_MODELS, checked now) and waits; tests may hand
    // shorter waits or another table.
    openAi: options.openAi ?? openAiSettingsFromEnv(env),
    mcp: options.mcp ?? { waitMs: waitSetting(env, 'MCP_WAIT_SECONDS') },
    // A request naming more images than a task may have (TASK_MAX_INPUT_IMAGES) is answered 422,
    // not queued; owners' webhook redeliveries are limited (WEBHOOK_REDELIVERIES_*).
    maxInputImages: options.maxInputImages ?? taskLimitsFromEnv(env).inputLimits.maxImages,
    redeliveryLimits: options.redeliveryLimits ?? redeliveryLimitsFromEnv(env),
  });
  registerHealthRoutes(app, readiness);
  return { app, connections: endStalledConnectionsOnClose(app) };
}
