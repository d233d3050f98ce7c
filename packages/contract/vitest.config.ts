import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    name: 'contract',
    include: ['test/**/*.test.ts'],
    // Generous: a bound for a test that hangs, never a speed a busy machine must hold.
    testTimeout: 60000,
    hookTimeout: 60000,
  },
});
