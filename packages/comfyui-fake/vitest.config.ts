import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    name: 'comfyui-fake',
    include: ['test/**/*.test.ts'],
    testTimeout: 120000,
    hookTimeout: 60000,
  },
});
