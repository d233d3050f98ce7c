import path from 'node:path';

export interface StartConfig {
  dataDir: string;
  databaseUrl: string | undefined;
  apiPort: number;
  apiHost: string;
  docsPort: number;
  publicUrl: string;
  apiKey: string | undefined;
  serverId: string | undefined;
}

/** The settings `npm start` reads (README's configuration table), with their defaults. */
export function readStartConfig(env: NodeJS.ProcessEnv): StartConfig {
  const apiPort = port(env.API_PORT, 8000, 'API_PORT');
  return {
    dataDir: path.resolve(env.IMAGEGEN_DATA_DIR || './data'),
    databaseUrl: env.DATABASE_URL || undefined,
    apiPort,
    // Loopback unless asked: a fresh clone should not expose an API with a printed key to the network.
    apiHost: env.API_HOST || '127.0.0.1',
    docsPort: port(env.DOCS_PORT, 3000, 'DOCS_PORT'),
    // An address, not `localhost`: links the API hands out (uploads, outputs) are valid inputs of
    // any request only with a host pydantic's HttpUrl takes, and it wants a top-level domain.
    publicUrl: (env.PUBLIC_URL || `http://127.0.0.1:${apiPort}`).replace(/\/+$/, ''),
    apiKey: env.IMAGEGEN_API_KEY || undefined,
    serverId: env.IMAGEGEN_SERVER_ID || undefined,
  };
}

function port(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`${name}=${value} is not a port number`);
  return n;
}
