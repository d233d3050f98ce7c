export { type ComfyClientOptions, createComfyClient } from './comfy-client.ts';
export { describeRejection } from './rejection.ts';
