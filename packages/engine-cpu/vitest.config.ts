import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    name: 'engine-cpu',
    include: ['test/**/*.test.ts'],
    // Real models on the CPU: loading one and its first run take minutes on a busy machine. The
    // bounds are for a hang; a hook that times out while onnxruntime runs would end the process.
    testTimeout: 300000,
    hookTimeout: 300000,
  },
});
