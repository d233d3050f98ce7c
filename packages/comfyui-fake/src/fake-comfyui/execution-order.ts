import type { ApiPrompt, ObjectInfo } from '@imagegen/engine-comfyui/engine';

/**
 * The order in which ComfyUI 0.3.64 runs a graph's nodes (comfy_execution/graph.py
 * ExecutionList): the output nodes' ancestors are gathered depth first, cached nodes are left out,
 * and of the nodes ready to run it picks an output node first, then one that feeds an output
 * directly, then one two links away, else the first gathered. Reproduced so the fake's messages
 * come in the real server's order.
 */
export class ExecutionOrder {
  /** Nodes still to run, in the order they were gathered. */
  private readonly pending = new Map<string, true>();
  private readonly blockCount = new Map<string, number>();
  /** node → the nodes waiting for it. */
  private readonly blocking = new Map<string, Set<string>>();

  constructor(
    private readonly prompt: ApiPrompt,
    private readonly objectInfo: ObjectInfo,
    private readonly isCached: (id: string) => boolean,
  ) {}

  /** Adds an output node and every uncached node it needs. */
  add(output: string): void {
    const stack = [output];
    const links: [string, string][] = [];
    while (stack.length > 0) {
      const id = stack.pop()!;
      if (this.pending.has(id)) continue;
      this.pending.set(id, true);
      this.blockCount.set(id, 0);
      this.blocking.set(id, new Set());
      for (const value of Object.values(this.prompt[id]?.inputs ?? {})) {
        const from = linkSource(value);
        if (from === undefined || this.isCached(from)) continue;
        stack.push(from);
        links.push([from, id]);
      }
    }
    for (const [from, to] of links) {
      if (this.isCached(from)) continue;
      const blocked = this.blocking.get(from)!;
      if (!blocked.has(to)) {
        blocked.add(to);
        this.blockCount.set(to, (this.blockCount.get(to) ?? 0) + 1);
      }
    }
  }

  get done(): boolean {
    return this.pending.size === 0;
  }

  /** The next node to run (ux_friendly_pick_node). */
  next(): string {
    const ready = [...this.pending.keys()].filter((id) => this.blockCount.get(id) === 0);
    const isOutput = (id: string) => this.objectInfo[this.prompt[id]?.class_type ?? '']?.output_node === true;
    const feeds = (id: string) => [...(this.blocking.get(id) ?? [])];
    return (
      ready.find(isOutput) ??
      ready.find((id) => feeds(id).some(isOutput)) ??
      ready.find((id) => feeds(id).some((next) => feeds(next).some(isOutput))) ??
      ready[0]!
    );
  }

  complete(id: string): void {
    this.pending.delete(id);
    for (const blocked of this.blocking.get(id) ?? []) {
      this.blockCount.set(blocked, (this.blockCount.get(blocked) ?? 1) - 1);
    }
    this.blocking.delete(id);
  }
}

/** The source node of a link input `[id, index]`, else undefined. */
export function linkSource(value: unknown): string | undefined {
  return Array.isArray(value) &&
    value.length === 2 &&
    typeof value[0] === 'string' &&
    typeof value[1] === 'number'
    ? value[0]
    : undefined;
}
