import { compileValidator, endpointByPath } from '@imagegen/contract';
import type { EngineRegistry } from '@imagegen/engines';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyRequest } from 'fastify';
import { callerOf } from '../http/api-key-auth.ts';
import { HttpError } from '../http/http-errors.ts';
import { queueTask, type TaskRouteOptions } from '../http/routes/tasks.ts';
import { downloadUrl } from '../storage/blob-keys.ts';
import { hasEnded, type TaskStatus, taskStatusBody } from '../tasks/index.ts';
import type { BlobStore } from '../tasks/types.ts';
import { type PipelineTool, TASK_STATUS_TOOL, TOOLS_BY_NAME } from './pipeline-tools.ts';

/**
 * A call of an MCP tool: the arguments checked by the pipeline's own validator (and the engine
 * that serves it), the task queued as any submission is (same keys, queue, fairness and plan
 * caps), followed with a progress notification at each step it makes, and answered with its
 * images: inline (MCP image content) up to INLINE_IMAGE_BYTES each, as links to the API's files
 * (resource links) above. What the caller can fix, or must wait for, is a result marked isError
 * with words for the agent that called, never a protocol error.
 */

export interface McpOptions
  extends Pick<TaskRouteOptions, 'pool' | 'publicUrl' | 'watcher' | 'statusReader' | 'metrics' | 'closing'> {
  readonly store: BlobStore;
  readonly admit?: EngineRegistry['admit'];
  /** How long a tool call waits for its task (MCP_WAIT_SECONDS). */
  readonly waitMs: number;
  /** The largest image answered inline (default INLINE_IMAGE_BYTES); a larger one goes as a link. */
  readonly inlineImageBytes?: number;
}

/** An image larger than this goes as a link: a client holds inline images in the agent's context. */
export const INLINE_IMAGE_BYTES = 2 * 1024 * 1024;

export interface CallReport {
  /** Aborted when the client cancels the call or goes away: the wait ends, the task goes on. */
  readonly signal: AbortSignal;
  /** Sends a progress notification, when the client asked for them (a progress token). */
  progress(progress: number, message: string): Promise<void>;
}

function failed(text: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text }] };
}

export async function callTool(
  options: McpOptions,
  request: FastifyRequest,
  tool: PipelineTool,
  args: Record<string, unknown>,
  report: CallReport,
): Promise<CallToolResult> {
  if (tool.name === TASK_STATUS_TOOL) return taskStatus(options, request, args);
  const pipeline = tool.pipeline!;
  const endpoint = endpointByPath(pipeline)!;
  const checked = compileValidator(endpoint.request!, 'body')(args);
  if (!checked.ok) {
    const problems = checked.detail.map(
      (entry) => `${entry.loc.slice(1).join('.') || 'arguments'}: ${entry.msg}`,
    );
    return failed(`${tool.name} refused its arguments (the API's 422):\n${problems.join('\n')}`);
  }
  const refusal = options.admit?.(pipeline, checked.value);
  if (refusal) return failed(`${tool.name} refused ${refusal.field}: ${refusal.message}`);
  const ownerId = callerOf(request).ownerId;
  let id: string;
  try {
    const params = {
      ownerId,
      endpoint: pipeline,
      kind: 'generation' as const,
      input: checked.value,
      publicUrl: options.publicUrl,
      requestId: request.id,
    };
    id = (await queueTask(options, request, params, undefined)).submitted.id;
  } catch (error) {
    if (error instanceof HttpError) return failed(`${tool.name} was refused: ${error.message}`);
    throw error;
  }
  const task = await follow(options, ownerId, id, report);
  if (!task || !hasEnded(task)) {
    const seconds = Math.round(options.waitMs / 1000);
    return failed(
      `Task ${id} of ${tool.name} had not ended after ${seconds} s; it goes on. Call ${TASK_STATUS_TOOL} with ` +
        `{"tool": "${tool.name}", "task_id": "${id}"} for its images.`,
    );
  }
  return outcome(options, tool, task);
}

/**
 * Waits for the task to end (the wait, a cancel or the API closing stops it first), telling each
 * step: `queued`, then its progress. MCP's progress must rise: a report that would not is skipped.
 */
async function follow(
  options: McpOptions,
  ownerId: string,
  id: string,
  report: CallReport,
): Promise<TaskStatus | null> {
  let told = -1;
  const tell = (task: TaskStatus) => {
    const progress = task.state === 'running' ? (task.progress ?? 0) : 0;
    if (progress <= told) return;
    told = progress;
    const words = task.state === 'running' ? `running, ${Math.round(progress * 100)} %` : 'queued';
    void report.progress(progress, words).catch(() => {});
  };
  let finish: (task: TaskStatus | null) => void = () => {};
  const ended = new Promise<TaskStatus | null>((resolve) => {
    finish = resolve;
  });
  const watching = await options.watcher.watch(ownerId, id, (task) => {
    if (hasEnded(task)) finish(task);
    else tell(task);
  });
  if (!watching) return null;
  if (hasEnded(watching.task)) finish(watching.task);
  else tell(watching.task);
  const stop = AbortSignal.any([report.signal, options.closing, AbortSignal.timeout(options.waitMs)]);
  const onStop = () => finish(null);
  stop.addEventListener('abort', onStop, { once: true });
  if (stop.aborted) onStop();
  try {
    return (await ended) ?? (await options.statusReader.read(ownerId, id));
  } finally {
    stop.removeEventListener('abort', onStop);
    watching.stop();
  }
}

/** A task that ended, as a tool's result: its images (or text), or its error. */
async function outcome(options: McpOptions, tool: PipelineTool, task: TaskStatus): Promise<CallToolResult> {
  const body = taskStatusBody(task, options.publicUrl);
  if (task.state !== 'succeeded')
    return failed(`Task ${task.id} of ${tool.name} failed: ${String(body.error)}`);
  const urls = task.outputKeys.map((key) => downloadUrl(options.publicUrl, key));
  const content: CallToolResult['content'] = [];
  const summary =
    typeof body.prompt === 'string'
      ? `Task ${task.id} of ${tool.name} succeeded: ${body.prompt}`
      : `Task ${task.id} of ${tool.name} succeeded with ${urls.length} image${urls.length === 1 ? '' : 's'}:\n${urls.join('\n')}`;
  content.push({ type: 'text', text: summary });
  for (const [n, key] of task.outputKeys.entries()) {
    const blob = await options.store.get(key);
    if (!blob) continue;
    if (blob.data.length <= (options.inlineImageBytes ?? INLINE_IMAGE_BYTES)) {
      content.push({ type: 'image', data: blob.data.toString('base64'), mimeType: blob.contentType });
    } else {
      content.push({
        type: 'resource_link',
        uri: urls[n]!,
        name: key.split('/').pop() ?? key,
        mimeType: blob.contentType,
        description: `Output ${n + 1} of task ${task.id} (${blob.data.length} bytes)`,
      });
    }
  }
  return { content };
}

async function taskStatus(
  options: McpOptions,
  request: FastifyRequest,
  args: Record<string, unknown>,
): Promise<CallToolResult> {
  const tool = TOOLS_BY_NAME.get(String(args.tool ?? ''));
  const id = typeof args.task_id === 'string' ? args.task_id : '';
  if (!tool?.pipeline)
    return failed(`${TASK_STATUS_TOOL}: no pipeline tool is named ${JSON.stringify(args.tool)}`);
  const task = await options.statusReader.read(callerOf(request).ownerId, id);
  if (!task || task.endpoint !== tool.pipeline)
    return failed(`${TASK_STATUS_TOOL}: ${tool.name} has no task ${id}`);
  if (hasEnded(task)) return outcome(options, tool, task);
  const words = task.state === 'running' ? `running, ${Math.round((task.progress ?? 0) * 100)} %` : 'queued';
  return { content: [{ type: 'text', text: `Task ${task.id} of ${tool.name} is ${words}.` }] };
}
