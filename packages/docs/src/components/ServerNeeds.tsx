import engines from '@site/.generated/engines.json';
import type { ReactNode } from 'react';
import type { EngineCatalogData } from './engine-note.ts';
import { ServerNeedsBody } from './ServerNeedsBody.tsx';

/**
 * What the servers of an engine that runs on servers of its own (comfyui) need for each pipeline,
 * printed at build time from the engine catalogue (.generated/engines.json), which takes it from
 * the engine's compilers: never written by hand.
 */
export default function ServerNeeds({ engine = 'comfyui' }: { engine?: string }): ReactNode {
  return <ServerNeedsBody catalog={engines as EngineCatalogData} engine={engine} />;
}
