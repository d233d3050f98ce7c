import { defineConfig } from 'vitest/config';

// Browser tests: Chromium and the built site are expensive to start, so files run one at a time.
export default defineConfig({
  test: {
    name: 'e2e',
    include: ['**/*.test.ts'],
    testTimeout: 60000,
    hookTimeout: 180000,
    fileParallelism: false,
  },
});
