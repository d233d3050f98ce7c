import { defineConfig } from 'vitest/config';

export default defineConfig({
  // Components render in tests with React 17+'s automatic runtime, as Docusaurus compiles them.
  esbuild: { jsx: 'automatic' },
  test: {
    name: 'docs',
    include: ['test/**/*.test.ts'],
    testTimeout: 60000,
    // Suites index the built site in beforeAll: seconds on a loaded machine.
    hookTimeout: 120000,
  },
});
