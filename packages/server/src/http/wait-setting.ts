/** How long a request held open for its task waits when its setting does not say: five minutes. */
export const DEFAULT_WAIT_SECONDS = 300;

/**
 * The longest a request held open for its task waits (the OpenAI Images API's, an MCP tool
 * call's), in ms, from a setting of whole seconds, 1 to 3600.
 */
export function waitSetting(env: NodeJS.ProcessEnv, name: string): number {
  const text = env[name]?.trim();
  const seconds = text ? Number(text) : DEFAULT_WAIT_SECONDS;
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > 3600) {
    throw new Error(`${name}=${text} is not a whole number of seconds from 1 to 3600`);
  }
  return seconds * 1000;
}
