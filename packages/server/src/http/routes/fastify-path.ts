/** The contract writes path parameters as OpenAPI does (`{task_id}`); Fastify wants `:task_id`. */
export function fastifyPath(path: string): string {
  return path.replace(/\{([^}]+)\}/g, ':$1');
}
