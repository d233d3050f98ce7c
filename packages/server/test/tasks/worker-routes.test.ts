import { describe, expect, it } from 'vitest';
import { workerRoutes } from '../../src/tasks/worker-routes.ts';

const task = (targetServer: string | null, targetPool: string) => ({ targetServer, targetPool });

describe("a worker's routes", () => {
  it('are the shared pool alone for a worker with no server id and no engine servers', () => {
    const routing = workerRoutes(undefined, [], new Map());
    expect(routing.routes).toEqual(['shared']);
    expect(routing.placement(task(null, 'shared'))).toBeUndefined();
  });

  it("are its own server's route and its owner's pool when it has a server id", () => {
    const routing = workerRoutes('gpu-1', [], new Map([['gpu-1', 'acme']]));
    expect(routing.routes).toEqual(['server:gpu-1', 'owner:acme']);
    expect(routing.placement(task('gpu-1', 'owner:acme'))).toBeUndefined();
  });

  it('serve each engine server as a server id of its own, in its owner pool or the shared one', () => {
    const owners = new Map<string, string | null>([
      ['a', null],
      ['b', 'acme'],
      ['c', 'acme'],
      ['d', 'zeta'],
    ]);
    const routing = workerRoutes(undefined, ['a', 'b', 'c', 'd'], owners);
    expect(routing.routes).toEqual([
      'shared',
      'server:a',
      'server:b',
      'owner:acme',
      'server:c',
      'server:d',
      'owner:zeta',
    ]);
    expect(routing.placement(task('c', 'owner:acme'))).toEqual(['c']);
    expect(routing.placement(task(null, 'owner:acme'))).toEqual(['b', 'c']);
    expect(routing.placement(task(null, 'owner:zeta'))).toEqual(['d']);
    // Shared tasks never run on a server dedicated to an enterprise owner.
    expect(routing.placement(task(null, 'shared'))).toEqual(['a']);
  });

  it('leave a shared task with nowhere to run when every engine server is dedicated (the engine says so)', () => {
    const routing = workerRoutes(undefined, ['b'], new Map([['b', 'acme']]));
    expect(routing.placement(task(null, 'shared'))).toEqual([]);
  });

  it("let tasks of the worker's own server id, or its pool, run on any of its engine servers", () => {
    const owners = new Map<string, string | null>([
      ['box', 'acme'],
      ['a', null],
    ]);
    const routing = workerRoutes('box', ['a'], owners);
    expect(routing.routes).toEqual(['server:box', 'owner:acme', 'server:a', 'shared']);
    expect(routing.placement(task('box', 'owner:acme'))).toBeUndefined();
    expect(routing.placement(task(null, 'owner:acme'))).toBeUndefined();
    expect(routing.placement(task(null, 'shared'))).toEqual(['a']);
  });

  it('take servers not yet announced as shared', () => {
    const routing = workerRoutes(undefined, ['a', 'b'], new Map());
    expect(routing.routes).toEqual(['shared', 'server:a', 'server:b']);
    expect(routing.placement(task(null, 'shared'))).toEqual(['a', 'b']);
  });
});
