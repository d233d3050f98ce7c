import { defineConfig } from 'vitest/config';

// One Vitest run covers every package. Each package keeps its own vitest.config.ts (its own
// timeouts and setup); the root global setup starts the one PostgreSQL cluster a run shares.
export default defineConfig({
  test: {
    projects: ['packages/*/vitest.config.ts', 'e2e/vitest.config.ts', 'test/vitest.config.ts'],
    globalSetup: ['test/postgres-cluster.ts'],
  },
});
