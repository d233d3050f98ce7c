/**
 * What other packages' tests and benchmarks use from the engines: test images (fixtures) and the
 * fake ComfyUI server.
 */
export * from '../../test/support/fixtures.ts';
export * from './comfyui-pipeline-suite.ts';
export * from './comfyui-server-suite.ts';
export * from './fake-comfyui/index.ts';
