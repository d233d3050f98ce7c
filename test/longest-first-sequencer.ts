import { readFileSync } from 'node:fs';
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** The wall times of the last measured run (the file-times reporter's output, committed). */
const TIMES_FILE = path.join(import.meta.dirname, 'file-times.json');

/**
 * Starts the longest test files first, across every project: on two workers, a run takes about the
 * longest file or half of all the files' time, whichever is more, only when the long files do not
 * start last. Vitest's own order runs the projects one after another and, without the cache of a
 * previous run (a fresh clone, CI), the larger files of each first, so a long file near the end of
 * the list ran alone for minutes. The times come from `test/file-times.json`, which the
 * file-times reporter writes (`.tmp/test-file-times.json`; copy it there after a whole run to
 * refresh them). A file it does not list yet is taken as one of the longest, so it never ends a
 * run alone.
 */
export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const times = readTimes();
    const longest = Math.max(0, ...times.values());
    const timeOf = (spec: TestSpecification) =>
      times.get(key(spec.project.name, path.relative(process.cwd(), spec.moduleId))) ?? longest;
    return [...files].sort((a, b) => timeOf(b) - timeOf(a));
  }
}

function key(project: string, file: string): string {
  return `${project}:${file.split(path.sep).join('/')}`;
}

function readTimes(): Map<string, number> {
  try {
    const { files } = JSON.parse(readFileSync(TIMES_FILE, 'utf8')) as {
      files: { project: string; file: string; wallMs: number }[];
    };
    return new Map(files.map((time) => [key(time.project, time.file), time.wallMs]));
  } catch {
    return new Map();
  }
}
