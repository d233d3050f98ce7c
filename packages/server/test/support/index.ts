/** Test support other parts of the repository use (the start program's tests, benchmarks, browser tests). */
export { apiCalls } from './api-calls.ts';
export { eventually } from './fakes.ts';
export { HOSTILE_SHAPES, type HostileShape } from './hostile-bodies.ts';
export { type FileServer, freePort, type LoopbackApi, serveFiles, startLoopbackApi } from './loopback.ts';
export { S3RVER_CREDENTIALS, type S3Server, startS3Server } from './s3-server.ts';
export { type StartedProcess, startProcess } from './start-process.ts';
export { createTestDatabase, type TestDatabase } from './test-database.ts';
