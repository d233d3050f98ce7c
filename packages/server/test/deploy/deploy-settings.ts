/**
 * What the deployment files (deploy/kubernetes, deploy/compose) are checked against: README's
 * configuration table and the program's source, so a file sets only settings that exist.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '../../../..');

/** The variables the AWS SDK's credential chain reads, which README names beside S3_BUCKET. */
export const SDK_VARIABLES = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'];

/** The variable names of README's configuration table (a row's first cell may name several). */
export function documentedSettings(): Set<string> {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const rows = readme
    .slice(readme.indexOf('## Configuration'))
    .split('\n')
    .filter((l) => l.startsWith('| `'));
  return new Set(
    rows.flatMap((row) => [...row.split('|')[1]!.matchAll(/`([A-Z0-9_]+)`/g)].map((m) => m[1]!)),
  );
}

/** Every source file of the packages, to find where a setting is read. */
export function programSource(): string {
  const files: string[] = [];
  for (const pkg of readdirSync(path.join(ROOT, 'packages'))) {
    const src = path.join(ROOT, 'packages', pkg, 'src');
    try {
      for (const entry of readdirSync(src, { recursive: true }) as string[]) {
        if (/\.(ts|tsx)$/.test(entry)) files.push(readFileSync(path.join(src, entry), 'utf8'));
      }
    } catch {
      // a package without src/
    }
  }
  return files.join('\n');
}

/**
 * The parts of a command that name a program file the image does not hold: the image runs the
 * build (npm run build), `packages/NAME/dist/REST.js` built from `packages/NAME/REST.ts`, with the
 * condition under which the built packages resolve each other.
 */
export function missingProgramFiles(command: readonly string[]): string[] {
  const missing =
    command.slice(0, 2).join(' ') === 'node --conditions=imagegen-build' ? [] : [command.join(' ')];
  for (const part of command) {
    if (!part.startsWith('packages/')) continue;
    const source = part.replace(/^(packages\/[^/]+)\/dist\//, '$1/').replace(/\.js$/, '.ts');
    const built = source !== part;
    if (!built || !readdirSync(path.dirname(path.join(ROOT, source))).includes(path.basename(source))) {
      missing.push(part);
    }
  }
  return missing;
}
