import type { ComfyClient } from './contracts.ts';

/**
 * What each server lists in a model folder (`GET /models/<folder>`), cached for a few seconds so a
 * burst of tasks naming owners' models asks once. A file missing from a cached list is looked up
 * again before the answer is no: a model loaded a moment ago is never refused from a stale list.
 */
export class ModelListings {
  private readonly lists = new Map<string, { at: number; files: Promise<Set<string>> }>();

  constructor(private readonly ttlMs = 5_000) {}

  async has(client: ComfyClient, folder: string, file: string, signal: AbortSignal): Promise<boolean> {
    const key = `${client.name}\u0000${client.url}\u0000${folder}`;
    const cached = this.lists.get(key);
    if (cached && Date.now() - cached.at < this.ttlMs && (await cached.files).has(file)) return true;
    const entry = { at: Date.now(), files: client.models(folder, signal).then((files) => new Set(files)) };
    this.lists.set(key, entry);
    entry.files.catch(() => {
      if (this.lists.get(key) === entry) this.lists.delete(key);
    });
    return (await entry.files).has(file);
  }
}
