import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    name: 'contract',
    include: ['test/**/*.test.ts'],
    testTimeout: 10000,
    hookTimeout: 60000,
  },
});
