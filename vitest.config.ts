import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import LongestFirstSequencer from './test/longest-first-sequencer.ts';

// One Vitest run covers every package. Each package keeps its own vitest.config.ts (its own
// timeouts and setup); the root global setup starts the one PostgreSQL cluster a run shares.
export default defineConfig({
  test: {
    projects: ['packages/*/vitest.config.ts', 'e2e/vitest.config.ts', 'test/vitest.config.ts'],
    globalSetup: ['test/postgres-cluster.ts'],
    // Vitest's default is one file per core less one: a single file at a time on two cores. Most
    // files spend their time waiting on child processes, browsers and the database, so one file
    // per core keeps both busy.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // The longest files first, whatever their project, so that no long file ends the run alone.
    sequence: { sequencer: LongestFirstSequencer },
    // Each file's wall time, written to a file and the slowest printed at the end of every run.
    reporters: ['default', './test/file-times-reporter.ts'],
  },
});
