import { type Endpoint, endpoints } from '@imagegen/contract';

/**
 * The MCP tools: one per generation pipeline of the contract's endpoint table, its input schema
 * the pipeline's request schema (so a new pipeline is a new tool, with no code here), and
 * `task_status`, which reads a task a tool call stopped waiting for.
 */

export interface PipelineTool {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly inputSchema: { readonly type: 'object' } & Record<string, unknown>;
  /** The pipeline it runs; absent for `task_status`. */
  readonly pipeline?: string;
}

export const TASK_STATUS_TOOL = 'task_status';

/** `/sd/text2image/v1` → `sd_text2image_v1`: MCP's tool names are letters, digits, `_` and `-`. */
export function toolName(path: string): string {
  return path.replace(/^\//, '').replace(/[^A-Za-z0-9_-]+/g, '_');
}

/** The tool's words: the pipeline's summary and the first paragraph of its description, and what a call does. */
function describe(endpoint: Endpoint): string {
  const paragraph = endpoint.description.split('\n\n')[0] ?? '';
  return (
    `${paragraph}\n\nRuns ${endpoint.path} as a task and waits for it (progress is reported while it runs): ` +
    'answers its images (inline when small, as links when large), or its text. A call that stops waiting ' +
    `before the task ends names the task: \`${TASK_STATUS_TOOL}\` reads it later.`
  );
}

function pipelineTools(): PipelineTool[] {
  return endpoints
    .filter((endpoint) => endpoint.kind === 'generation' && endpoint.request)
    .map((endpoint) => ({
      name: toolName(endpoint.path),
      title: endpoint.summary,
      description: describe(endpoint),
      // The contract's schema as JSON: what the API validates the arguments with.
      inputSchema: JSON.parse(JSON.stringify(endpoint.request)) as PipelineTool['inputSchema'],
      pipeline: endpoint.path,
    }));
}

const statusTool: PipelineTool = {
  name: TASK_STATUS_TOOL,
  title: 'Task status',
  description:
    'The status of a task a pipeline tool started: pending with its progress, its images (or text) once it ' +
    'succeeded, or its error. For a tool call that stopped waiting before its task ended.',
  inputSchema: {
    type: 'object',
    required: ['tool', 'task_id'],
    properties: {
      tool: {
        type: 'string',
        description: 'The name of the tool that started the task (`sd_text2image_v1`).',
      },
      task_id: { type: 'string', description: 'The task id the tool call answered.' },
    },
  },
};

/** Every tool, in the endpoint table's order, `task_status` last. Built once: the table is fixed. */
export const TOOLS: readonly PipelineTool[] = [...pipelineTools(), statusTool];

export const TOOLS_BY_NAME: ReadonlyMap<string, PipelineTool> = new Map(
  TOOLS.map((tool) => [tool.name, tool]),
);
