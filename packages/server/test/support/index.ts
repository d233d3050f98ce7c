/** Test support other parts of the repository use (benchmarks, browser tests). */
export { apiCalls } from './api-calls.ts';
export { HOSTILE_SHAPES, type HostileShape } from './hostile-bodies.ts';
export { type FileServer, freePort, type LoopbackApi, serveFiles, startLoopbackApi } from './loopback.ts';
export { createTestDatabase, type TestDatabase } from './test-database.ts';
