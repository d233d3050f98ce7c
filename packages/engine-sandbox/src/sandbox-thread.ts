import { serveThread } from '@imagegen/engines/threads';
import { renderSample } from './sandbox-pixels.ts';

// The sandbox engine's drawing thread: one sample's pixels per request, moved back, not copied.
serveThread(renderSample, (pixels) => [
  pixels.background.buffer as ArrayBuffer,
  pixels.overlay.buffer as ArrayBuffer,
]);
