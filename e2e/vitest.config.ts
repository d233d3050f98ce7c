import { defineConfig } from 'vitest/config';

// Browser tests: each file starts its own Chromium and runs beside the other projects' files, as
// any file does (what a page shows is waited for, never timed against a machine's speed).
export default defineConfig({
  test: {
    name: 'e2e',
    include: ['**/*.test.ts'],
    testTimeout: 60000,
    hookTimeout: 180000,
  },
});
