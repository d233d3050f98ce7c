import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { UsageError } from './exit-codes.ts';

/**
 * Where the command finds the API and its key: `--base-url`, then the environment
 * (`IMAGEGEN_API_KEY`, `IMAGEGEN_BASE_URL`), then a config file, `{"apiKey": ..., "baseUrl": ...}`
 * at `$IMAGEGEN_CONFIG`, else `$XDG_CONFIG_HOME/imagegen/config.json` (`~/.config/...`).
 */

export const DEFAULT_BASE_URL = 'http://localhost:8000';

export interface Settings {
  readonly apiKey: string | undefined;
  readonly baseUrl: string;
}

export function configFileOf(env: Readonly<Record<string, string | undefined>>): string {
  if (env.IMAGEGEN_CONFIG) return env.IMAGEGEN_CONFIG;
  const base = env.XDG_CONFIG_HOME || path.join(homedir(), '.config');
  return path.join(base, 'imagegen', 'config.json');
}

export async function readSettings(
  env: Readonly<Record<string, string | undefined>>,
  baseUrlFlag: string | undefined,
): Promise<Settings> {
  const file = configFileOf(env);
  let config: { apiKey?: unknown; baseUrl?: unknown } = {};
  try {
    config = JSON.parse(await readFile(file, 'utf8')) as typeof config;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new UsageError(`the config file ${file} is not readable JSON: ${(error as Error).message}`);
    }
  }
  const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);
  return {
    apiKey: text(env.IMAGEGEN_API_KEY) ?? text(config.apiKey),
    baseUrl: baseUrlFlag ?? text(env.IMAGEGEN_BASE_URL) ?? text(config.baseUrl) ?? DEFAULT_BASE_URL,
  };
}
