import { ownerPool, SHARED_POOL } from './routing.ts';
import type { TaskRecord } from './types.ts';

/**
 * What a worker claims, and where each claimed task may run. A worker serves its own server id
 * (IMAGEGEN_SERVER_ID) if it has one, else the shared pool; and its engines' servers (a ComfyUI
 * server or group per name), each an enterprise server id of its own: the tasks routed to it by
 * `server_id`, and its owner's `server_id: "any"` tasks (the shared pool's while it has no owner).
 */
export interface WorkerRoutes {
  /** The task routes the claim matches (`server:<id>`, `owner:<uuid>`, `shared`). */
  readonly routes: string[];
  /**
   * The engine servers a claimed task may run on (`EngineJob.servers`): the one it was routed
   * to, or those of its pool. Absent when the engines have no servers, or when the task came to
   * this worker's own server id, which names the whole worker.
   */
  placement(task: Pick<TaskRecord, 'targetServer' | 'targetPool'>): readonly string[] | undefined;
}

/**
 * `owners` maps each announced server id to its owner (null: shared); ids not in it are taken
 * as shared, as a server nobody registered is.
 */
export function workerRoutes(
  ownId: string | undefined,
  engineServers: readonly string[],
  owners: ReadonlyMap<string, string | null>,
): WorkerRoutes {
  const poolOf = (id: string) => {
    const owner = owners.get(id);
    return owner ? ownerPool(owner) : SHARED_POOL;
  };
  const served = ownId === undefined ? [SHARED_POOL] : [`server:${ownId}`, poolOf(ownId)];
  for (const id of engineServers) served.push(`server:${id}`, poolOf(id));
  return {
    routes: [...new Set(served)],
    placement(task) {
      if (engineServers.length === 0) return undefined;
      if (task.targetServer !== null) {
        return engineServers.includes(task.targetServer) ? [task.targetServer] : undefined;
      }
      if (ownId !== undefined && poolOf(ownId) === task.targetPool) return undefined;
      return engineServers.filter((id) => poolOf(id) === task.targetPool);
    },
  };
}
