import { EngineInputError, type ModelSource } from '@imagegen/engines';
import { checkRanges } from './address-policy.ts';
import { GuardError, type GuardOptions, guardedStream } from './ssrf-guard.ts';

/**
 * Streams load_model's `model_url` for an engine that stores model files (the comfyui engine,
 * with COMFYUI_MODELS_DIR): the same address checks as every user-given URL, on every redirect,
 * and the body handed over unread, so a file of gigabytes never sits in memory. The engine caps it
 * (MODEL_MAX_BYTES) while writing. A refusal or a 4xx fails the task naming `model_url`; a timeout,
 * a network failure or a 5xx/429 is thrown as a plain error, which the worker retries.
 */
export interface ModelFetcherOptions extends GuardOptions {
  /** A body silent this long fails (default 60 s). */
  readonly idleTimeoutMs?: number;
}

export function createModelFetcher(options: ModelFetcherOptions = {}): ModelSource {
  checkRanges(options.allowedRanges ?? []);
  return async (url, signal) => {
    const fail = (reason: string, transient: boolean) =>
      transient ? new Error(`model_url: ${reason}`) : new EngineInputError(`model_url: ${reason}`);
    let answer: Awaited<ReturnType<typeof guardedStream>>;
    try {
      answer = await guardedStream(
        url,
        { signal, idleTimeoutMs: options.idleTimeoutMs ?? 60_000 },
        { totalTimeoutMs: 60_000, ...options },
      );
    } catch (error) {
      if (error instanceof GuardError) throw fail(error.message, error.transient);
      throw error;
    }
    const { status, headers, body } = answer;
    const encoding = headers['content-encoding'];
    if (status !== 200 || (encoding && encoding !== 'identity')) {
      body.destroy();
      if (status !== 200) throw fail(`server answered HTTP ${status}`, status >= 500 || status === 429);
      throw fail(`content-encoding ${encoding} is not accepted`, false);
    }
    const declared = Number(headers['content-length']);
    return { length: Number.isSafeInteger(declared) && declared >= 0 ? declared : null, body };
  };
}

/** The fetcher the environment asks for: IMAGEGEN_ALLOW_PRIVATE_URLS=1 admits loopback. */
export function modelFetcherFromEnv(env: NodeJS.ProcessEnv = process.env): ModelSource {
  return createModelFetcher({ allowPrivate: env.IMAGEGEN_ALLOW_PRIVATE_URLS === '1' });
}
