import { PLACEHOLDER_ENGINES } from './shipped-engines.ts';

export interface StartBannerFacts {
  readonly apiUrl: string;
  /** The key to show: made by this start (shown once) or IMAGEGEN_API_KEY; null on a later start. */
  readonly key: { readonly key: string; readonly created: boolean } | null;
  /** On a later start, the owner `keys create --owner` makes a key for (the first one), or null. */
  readonly owner: { readonly id: string; readonly name: string } | null;
  /** The documentation line: where it is served, or why it is not. */
  readonly docsLine: string;
  /** The documentation site's address, when this process serves it. */
  readonly docsUrl: string | null;
  /** Each engine of this process and the pipelines it serves here. */
  readonly engines: readonly { readonly name: string; readonly pipelines: readonly string[] }[];
}

/** How many placeholder pipelines the banner names before it points at /health for the rest. */
const NAMED_PLACEHOLDERS = 4;

/**
 * What `npm start` prints once the API listens: where everything is, which pipelines answer with
 * placeholders (a first user must not mistake them for the product's images), and a key with a
 * `curl` line that works as pasted, or, on a later start, the command that makes another key,
 * with the owner's id filled in.
 */
export function startBanner(facts: StartBannerFacts): string {
  const { apiUrl, key } = facts;
  const lines = [
    '',
    `imagegen API ready: ${apiUrl}   (OpenAPI: ${apiUrl}/openapi.json, health: ${apiUrl}/health)`,
    facts.docsLine,
    `Engines: ${facts.engines.map((e) => `${e.name} (${e.pipelines.length} pipelines)`).join(', ') || 'none'}`,
    ...placeholderLines(facts),
  ];
  if (key) {
    const shown = key.created ? 'Your API key (shown once, keep it):' : 'API key (IMAGEGEN_API_KEY):';
    const body = JSON.stringify({
      prompt: 'a lighthouse at dawn, watercolour',
      negative_prompt: 'blurry',
      samples: 1,
    });
    lines.push(
      `${shown} ${key.key}`,
      'Try it (submit, then poll the id it answers):',
      `  curl -s -X POST ${apiUrl}/sd/text2image/v1 -H 'API-Key: ${key.key}' -H 'Content-Type: application/json' -d '${body}'`,
      `  curl -s ${apiUrl}/sd/text2image/v1/status/<id> -H 'API-Key: ${key.key}'`,
    );
  } else if (facts.owner) {
    lines.push(
      `API keys: existing keys work; make another for owner ${facts.owner.name} with`,
      `  npm run --silent cli -- keys create --owner ${facts.owner.id}`,
    );
  } else {
    lines.push(
      'API keys: existing keys work; make another with  npm run --silent cli -- keys create --owner <owner-id>',
    );
  }
  return `${lines.join('\n')}\n`;
}

/** The pipelines this process answers with labelled placeholders, and how to get real images. */
function placeholderLines(facts: StartBannerFacts): string[] {
  const placeholders = facts.engines.filter((engine) => PLACEHOLDER_ENGINES.includes(engine.name));
  const pipelines = placeholders.flatMap((engine) => engine.pipelines);
  if (pipelines.length === 0) return [];
  const named = pipelines.slice(0, NAMED_PLACEHOLDERS).join(', ');
  const rest = pipelines.length - NAMED_PLACEHOLDERS;
  const guide = facts.docsUrl
    ? `${facts.docsUrl}/Deployment/Run-diffusion-on-ComfyUI`
    : 'the docs, Deployment, Run diffusion on ComfyUI';
  return [
    `Placeholders: ${pipelines.length} pipelines answer with labelled placeholder images, not real ones ` +
      `(engine ${placeholders.map((engine) => engine.name).join(', ')}): ${named}` +
      (rest > 0 ? ` and ${rest} more (GET ${facts.apiUrl}/health lists them)` : ''),
    `  For real images, set COMFYUI_URLS to your ComfyUI servers: ${guide}`,
  ];
}
