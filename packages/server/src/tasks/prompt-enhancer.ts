/**
 * `enhance_prompt`: the prompt rewritten by a language model before the engine draws, as the
 * original service's "Magic Prompt" does. The model is the operator's: any OpenAI-compatible chat
 * completions endpoint (Ollama, LocalAI, vLLM, llama.cpp's server, OpenAI itself), named by
 * PROMPT_ENHANCER_URL and PROMPT_ENHANCER_MODEL. Without one, or when it does not answer in time,
 * the prompt is used as given and the task's notes say so: a prompt that could not be improved
 * never fails a task the original would have run.
 *
 * The endpoint is the operator's own service, like COMFYUI_URLS: it is not an address a user gave,
 * so it does not go through the SSRF guard (it is usually on a private network).
 */

/** What the model is told, documented on the docs page of `/generate/v3`. */
export const ENHANCER_INSTRUCTION =
  'You rewrite prompts for an image generation model. Keep the subject, and every detail and word ' +
  'of text the user gave; where the prompt leaves them open, add concrete visual detail: setting, ' +
  'composition, lighting, style and colours. Answer with the rewritten prompt only, in English, as ' +
  'one paragraph of at most 80 words, without quotes, notes or preamble.';

/** The longest rewritten prompt kept (longer answers are cut at a word). */
export const MAX_ENHANCED_CHARS = 1_000;

/** The most bytes of an answer read: a chat completion of one paragraph is a few kilobytes. */
const MAX_ANSWER_BYTES = 256 * 1024;

/** The default of PROMPT_ENHANCER_TIMEOUT_SECONDS. */
export const DEFAULT_ENHANCER_TIMEOUT_SECONDS = 30;

export interface PromptEnhancer {
  /** The model named in the task's notes. */
  readonly model: string;
  /**
   * The prompt rewritten, and the note the task carries: what the model made of it, or why the
   * prompt was used as given. Rejects only when `signal` aborts (the task was stopped).
   */
  enhance(prompt: string, signal: AbortSignal): Promise<{ prompt: string; note: string }>;
}

/** The note of a task that asked for `enhance_prompt` where no enhancer is configured. */
export const NO_ENHANCER_NOTE =
  'enhance_prompt: no language model is configured on this deployment to rewrite prompts ' +
  '(PROMPT_ENHANCER_URL), so the prompt was used as given';

export interface PromptEnhancerSettings {
  /** The API's base URL (`http://ollama:11434/v1`): requests go to `<url>/chat/completions`. */
  readonly url: string;
  readonly model: string;
  /** Sent as `Authorization: Bearer <key>`, where the endpoint wants one. */
  readonly key?: string;
  readonly timeoutMs: number;
}

/**
 * The enhancer PROMPT_ENHANCER_URL, _MODEL, _KEY and _TIMEOUT_SECONDS describe, or none when the
 * URL is unset. A malformed setting throws, naming it (the start stops).
 */
export function promptEnhancerFromEnv(env: Readonly<Record<string, string | undefined>>): {
  promptEnhancer?: PromptEnhancer;
} {
  const url = env.PROMPT_ENHANCER_URL?.trim();
  if (!url) return {};
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`PROMPT_ENHANCER_URL: "${url}" is not a URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new Error(`PROMPT_ENHANCER_URL: "${url}" is not an http(s) URL`);
  const model = env.PROMPT_ENHANCER_MODEL?.trim();
  if (!model) throw new Error('PROMPT_ENHANCER_MODEL: the model to ask is required with PROMPT_ENHANCER_URL');
  const timeout = env.PROMPT_ENHANCER_TIMEOUT_SECONDS?.trim() || String(DEFAULT_ENHANCER_TIMEOUT_SECONDS);
  const seconds = Number(timeout);
  if (!/^\d{1,4}$/.test(timeout) || seconds < 1 || seconds > 600)
    throw new Error(`PROMPT_ENHANCER_TIMEOUT_SECONDS: "${timeout}" is not a whole number from 1 to 600`);
  const key = env.PROMPT_ENHANCER_KEY?.trim();
  return {
    promptEnhancer: createPromptEnhancer({ url, model, ...(key ? { key } : {}), timeoutMs: seconds * 1000 }),
  };
}

export function createPromptEnhancer(settings: PromptEnhancerSettings): PromptEnhancer {
  const endpoint = `${settings.url.replace(/\/+$/, '')}/chat/completions`;
  return {
    model: settings.model,
    async enhance(prompt, signal) {
      const asGiven = (why: string) => ({
        prompt,
        note: `enhance_prompt: ${settings.model} ${why}, so the prompt was used as given`,
      });
      if (!prompt.trim()) return asGiven('had no prompt to rewrite');
      const timeout = AbortSignal.timeout(settings.timeoutMs);
      let answer: unknown;
      try {
        const response = await fetch(endpoint, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...(settings.key ? { authorization: `Bearer ${settings.key}` } : {}),
          },
          body: JSON.stringify({
            model: settings.model,
            messages: [
              { role: 'system', content: ENHANCER_INSTRUCTION },
              { role: 'user', content: prompt },
            ],
            temperature: 0.7,
            max_tokens: 300,
            stream: false,
          }),
          redirect: 'error',
          signal: AbortSignal.any([signal, timeout]),
        });
        const body = await readCapped(response);
        if (!response.ok) return asGiven(`answered HTTP ${response.status}`);
        answer = JSON.parse(body);
      } catch (error) {
        signal.throwIfAborted();
        if (timeout.aborted) return asGiven(`did not answer within ${settings.timeoutMs / 1000} s`);
        return asGiven(`could not be asked (${(error as Error).message})`);
      }
      const text = rewrittenPrompt(answer);
      if (!text) return asGiven('answered no prompt');
      return {
        prompt: text,
        note: `enhance_prompt: the prompt was rewritten by ${settings.model} before generating: "${text}"`,
      };
    },
  };
}

/** The body of an answer as text, refusing one past MAX_ANSWER_BYTES. */
async function readCapped(response: Response): Promise<string> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  const reader = response.body?.getReader();
  if (!reader) return '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    if (bytes > MAX_ANSWER_BYTES) {
      await reader.cancel();
      throw new Error(`its answer passed ${MAX_ANSWER_BYTES} bytes`);
    }
    chunks.push(Buffer.from(value));
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The rewritten prompt of a chat completion (`choices[0].message.content`), tidied: a reasoning
 * model's `<think>` section and wrapping quotes removed, white space joined, cut at a word past
 * MAX_ENHANCED_CHARS. Empty when the answer holds none.
 */
export function rewrittenPrompt(answer: unknown): string {
  const content = (answer as { choices?: { message?: { content?: unknown } }[] } | null)?.choices?.[0]
    ?.message?.content;
  if (typeof content !== 'string') return '';
  let text = content
    .replace(/<think>[\s\S]*?<\/think>/g, '')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^["'“”]+|["'“”]+$/g, '')
    .trim();
  if (text.length > MAX_ENHANCED_CHARS) {
    const cut = text.slice(0, MAX_ENHANCED_CHARS);
    text = cut.slice(0, Math.max(cut.lastIndexOf(' '), 1)).trim();
  }
  return text;
}
