import { notedDescription, withFieldNotes } from '@imagegen/contract/description-notes';
import { endpointByPath, endpoints } from '@imagegen/contract/endpoints';
import { CPU_ENGINE_NOTES } from '@imagegen/engine-cpu/notes';
import type { TaskPath } from '../types.ts';
import { UsageError } from './exit-codes.ts';
import { type FieldFlag, fieldFlags, type JsonSchema } from './schema-fields.ts';

/**
 * The pipelines the command runs, read from the contract's endpoint table: their names on the
 * command line (`sd/text2image` for `/sd/text2image/v1`, `generate/v3` for `/generate/v3`), and
 * their request fields as flags. The contract is bundled into the built command (scripts/build.ts),
 * so the flags are those of the API the command was built with. The help adds the notes of the cpu
 * engine, which every default deployment serves (what its superresolution runs on, which inputs
 * must show a face, when its NSFW checker says unsafe), as the API's /openapi.json does there.
 * They come from the engine's `./notes` entry, data only: its main entry names the engine's code
 * in dynamic imports, which a bundler would follow into tfjs and sharp.
 */

export interface Pipeline {
  readonly path: TaskPath;
  /** `sd/text2image`: the path without its slash and its `/v1`. */
  readonly name: string;
  readonly summary: string;
  /** The first paragraph of the operation's description. */
  readonly description: string;
  readonly fields: readonly FieldFlag[];
}

function nameOf(path: string): string {
  return path.replace(/^\//, '').replace(/\/v1$/, '');
}

export const PIPELINES: readonly Pipeline[] = endpoints
  .filter((endpoint) => endpoint.status !== undefined && endpoint.request !== undefined)
  .map((endpoint) => ({
    path: endpoint.path as TaskPath,
    name: nameOf(endpoint.path),
    summary: endpoint.summary,
    description: notedDescription(endpoint, CPU_ENGINE_NOTES).split('\n\n')[0] ?? '',
    fields: fieldFlags(withFieldNotes(endpoint.request as JsonSchema, CPU_ENGINE_NOTES)),
  }));

/** The query flags of `GET /tasks/v1`. */
export const TASK_LIST_FIELDS: readonly FieldFlag[] = fieldFlags(
  endpointByPath('/tasks/v1')?.query as JsonSchema,
);

/** The pipeline a command line names: `sd/text2image`, `/sd/text2image/v1` or `sd/text2image/v1`. */
export function pipelineNamed(text: string): Pipeline {
  const name = nameOf(text.startsWith('/') ? text : `/${text}`);
  const pipeline = PIPELINES.find((candidate) => candidate.name === name);
  if (pipeline) return pipeline;
  const word =
    name
      .split('/')
      .filter((part) => !/^v\d+$/.test(part))
      .pop() ?? name;
  const near = PIPELINES.filter((candidate) => candidate.name.includes(word));
  const hint = near.length > 0 ? ` (did you mean ${near.map((p) => p.name).join(', ')}?)` : '';
  throw new UsageError(`no pipeline named ${text}${hint}; \`imagegen run --help\` lists them`);
}
