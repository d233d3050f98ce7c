import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

/** One test file's time in a run: from the moment its worker began importing it to its end. */
export interface FileTime {
  file: string;
  project: string;
  /** Wall-clock milliseconds the file held a worker (import, hooks and tests). */
  wallMs: number;
  /** Of which importing the file and what it imports (Vitest's collect phase). */
  importMs: number;
  tests: number;
  /** The file's slowest test, with its own milliseconds. */
  slowestTest: { name: string; ms: number } | null;
  state: string;
}

/**
 * Writes every test file's wall time of a run to `TEST_FILE_TIMES` (a JSON file, default
 * `.tmp/test-file-times.json`) and prints the slowest ones when the run ends, so a slow file shows
 * in every CI log and the file can be compared between runs (`npm test` uses it beside the default
 * reporter).
 */
export default class FileTimesReporter implements Reporter {
  private readonly queued = new Map<string, number>();
  private readonly times: FileTime[] = [];
  private readonly runStarted = Date.now();

  onTestModuleQueued(module: TestModule): void {
    this.queued.set(module.moduleId, Date.now());
  }

  onTestModuleEnd(module: TestModule): void {
    const began = this.queued.get(module.moduleId) ?? this.runStarted;
    let tests = 0;
    let slowestTest: FileTime['slowestTest'] = null;
    for (const test of module.children.allTests()) {
      tests++;
      const ms = test.diagnostic()?.duration ?? 0;
      if (!slowestTest || ms > slowestTest.ms) slowestTest = { name: test.fullName, ms: Math.round(ms) };
    }
    this.times.push({
      file: path.relative(process.cwd(), module.moduleId),
      project: module.project.name,
      wallMs: Date.now() - began,
      importMs: Math.round(module.diagnostic().collectDuration),
      tests,
      slowestTest,
      state: module.state(),
    });
  }

  onTestRunEnd(): void {
    if (this.times.length === 0) return;
    const out = path.resolve(process.env.TEST_FILE_TIMES || '.tmp/test-file-times.json');
    mkdirSync(path.dirname(out), { recursive: true });
    const sorted = [...this.times].sort((a, b) => b.wallMs - a.wallMs);
    const totalMs = Date.now() - this.runStarted;
    writeFileSync(out, `${JSON.stringify({ totalMs, files: sorted }, null, 2)}\n`);
    const rows = sorted.slice(0, 25).map((time) => {
      const seconds = (time.wallMs / 1000).toFixed(1).padStart(6);
      return `${seconds} s  ${time.file} (${time.tests} tests)`;
    });
    console.log(
      `\nThe ${rows.length} slowest test files of ${this.times.length} (wall time in their worker; all of them in ${out}):\n${rows.join('\n')}\n`,
    );
  }
}
