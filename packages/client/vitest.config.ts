import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    name: 'client',
    include: ['test/**/*.test.ts'],
    // The CLI suites start the command as a child process (through tsx): seconds each when loaded.
    testTimeout: 60000,
    hookTimeout: 120000,
  },
});
