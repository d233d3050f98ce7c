import { createClient, type ImagegenClient } from '../client.ts';
import type { Output } from './progress.ts';
import { readSettings } from './settings.ts';

/** What a command works with: its streams, environment and interrupt, given by bin.ts (or a test). */
export interface CliContext {
  readonly stdout: Output;
  readonly stderr: Output;
  readonly stdin: AsyncIterable<Uint8Array | string>;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /** Aborts when the user presses Ctrl-C. */
  readonly interrupted: AbortSignal;
}

export async function clientFor(
  context: CliContext,
  baseUrlFlag: string | undefined,
): Promise<ImagegenClient> {
  const settings = await readSettings(context.env, baseUrlFlag);
  return createClient({ apiKey: settings.apiKey, baseUrl: settings.baseUrl });
}

/** The one value of a flag, or undefined. */
export function single(values: Map<string, string[]>, flag: string): string | undefined {
  return values.get(flag)?.at(-1);
}

export function switchOn(values: Map<string, string[]>, flag: string): boolean {
  return single(values, flag) === 'true';
}
