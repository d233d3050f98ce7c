/**
 * Test support other parts of the repository use (the start program's tests, benchmarks, browser
 * tests). The S3 server (s3rver) is ./testing/s3, so that only the tests that need a bucket load it.
 */
export { apiCalls } from './api-calls.ts';
export { eventually } from './fakes.ts';
export { HOSTILE_SHAPES, type HostileShape } from './hostile-bodies.ts';
export { type FileServer, freePort, type LoopbackApi, serveFiles, startLoopbackApi } from './loopback.ts';
export { createTestDatabase, type TestDatabase } from './test-database.ts';
export { blackPng, claimedSizePng, incompressiblePng, noiseImage } from './test-images.ts';
