import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    name: 'engine-cpu',
    include: ['test/**/*.test.ts'],
    testTimeout: 120000,
    hookTimeout: 60000,
  },
});
