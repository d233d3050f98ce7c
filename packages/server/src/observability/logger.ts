import { pino } from 'pino';

export type Logger = pino.Logger;
type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/**
 * What a log line may carry besides its message. `level` defaults to warn: the worker's and the
 * dispatcher's plain lines are the things that went wrong; their routine lines say `info`.
 */
export interface LogFields {
  readonly level?: LogLevel;
  readonly taskId?: string | null;
  /** The X-Request-Id of the submission that created the task: one id from submit to webhook. */
  readonly requestId?: string | null;
  readonly [field: string]: unknown;
}

/** The line logger the worker, the dispatcher and the CLI take: a message and its fields. */
export type LineLog = (line: string, fields?: LogFields) => void;

/**
 * Never written, wherever a caller puts them: keys, secrets, signatures, credentials. Fields are
 * matched by name at the top level and one level down (headers objects included).
 */
const REDACTED_PATHS = [
  'apiKey',
  'api_key',
  'authorization',
  'secret',
  'webhook_secret',
  'signature',
  'password',
  '*.apiKey',
  '*.api_key',
  '*.authorization',
  '*.secret',
  '*.webhook_secret',
  '*.signature',
  '*.password',
  '*["api-key"]',
  '*["webhook-signature"]',
  '*.cookie',
  'req.headers["api-key"]',
  'req.headers.authorization',
  'req.headers.cookie',
];

export interface LoggerOptions {
  /** LOG_LEVEL: debug, info (default), warn or error. */
  level?: string;
  /** Where the JSON lines go (default stdout); tests capture them. */
  destination?: pino.DestinationStream;
}

/**
 * The process's logger: JSON lines through pino (Fastify's own), one object per line with
 * `level`, `time`, `msg`, the component (`api`, `worker`, `webhooks`, `docs`) and, for a task,
 * `taskId` and `requestId`. Known secret fields are censored before they are written.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const settings: pino.LoggerOptions = {
    level: options.level ?? 'info',
    base: { pid: process.pid },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  };
  return options.destination ? pino(settings, options.destination) : pino(settings);
}

/** The logger `npm start` and the roles use: LOG_LEVEL, written to stdout. */
export function loggerFromEnv(env: NodeJS.ProcessEnv): Logger {
  const level = env.LOG_LEVEL?.trim().toLowerCase() || 'info';
  if (!['debug', 'info', 'warn', 'error', 'silent', 'trace', 'fatal'].includes(level)) {
    throw new Error(`LOG_LEVEL: expected debug, info, warn or error, got ${JSON.stringify(env.LOG_LEVEL)}`);
  }
  return createLogger({ level });
}

/** A line logger writing through `logger` (one component's child). */
export function lineLog(logger: Logger): LineLog {
  return (line, fields = {}) => {
    const { level = 'warn', ...rest } = fields;
    logger[level](rest, line);
  };
}
