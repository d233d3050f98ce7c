import { defineConfig } from 'vitest/config';

// The repository's own scripts (what `npm test` runs before the suite).
export default defineConfig({
  test: {
    name: 'tooling',
    include: ['*.test.ts'],
    testTimeout: 20000,
  },
});
