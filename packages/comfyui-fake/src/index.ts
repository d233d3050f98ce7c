/**
 * `@imagegen/comfyui-fake`: the fake ComfyUI server that tests and benchmarks run the comfyui
 * engine against, the POST /prompt validation it holds graphs to, and the pipeline suite that runs
 * against it or against a real server (`npm run test:comfyui`, or only validated there with
 * `--validate-only`), and the account of what the gateway
 * adds to a backlog (gateway-overhead.ts, for the comfyui benchmark).
 */
export * from './comfyui-pipeline-suite.ts';
export * from './comfyui-server-suite.ts';
export * from './comfyui-validation-suite.ts';
export * from './fake-comfyui/index.ts';
export * from './gateway-overhead.ts';
export { SERVER_ERROR_TEXT, validatePrompt } from './validation/validate-prompt.ts';
