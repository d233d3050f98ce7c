import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { helpText, USAGE, UsageError } from '../../src/cli/commands.ts';

const run = promisify(execFile);
const CLI = path.resolve(import.meta.dirname, '../../src/cli/main.ts');

/** The CLI as `npm run --silent cli --` runs it; its database is unreachable, so help must not need one. */
async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { ...process.env, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' };
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', CLI, ...args], { env });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe('the CLI help', () => {
  it("prints a command's usage lines and the notes for `help COMMAND`, and refuses an unknown one", () => {
    const owners = helpText(['owners']);
    expect(owners).toContain('  owners create --name NAME');
    expect(owners).toContain('  owners list');
    expect(owners).not.toContain('keys create');
    expect(owners).toContain('Plans: FREE');
    expect(
      helpText(['keys', 'revoke'])
        .split('\n')
        .filter((line) => line.startsWith('  ')),
    ).toEqual([expect.stringMatching(/^ {2}keys revoke --owner OWNER_ID/)]);
    // A command's continuation lines come with it.
    expect(helpText(['migrate'])).toMatch(/ {2}migrate .*\n {40,}does on start/);
    expect(helpText([])).toBe(USAGE);
    expect(() => helpText(['nosuch'])).toThrow(new UsageError('unknown command "nosuch"'));
  });

  // Five cold tsx starts at once: seconds each on a loaded 2-core machine, over 90 s together
  // beside a busy PostgreSQL pass. A bound for a hang.
  it('answers `help` and `help COMMAND` as `--help` and `COMMAND --help`, exit 0, without a database', {
    timeout: 300_000,
  }, async () => {
    const [help, dashHelp, helpKeys, keysHelp, unknown] = await Promise.all([
      cli('help'),
      cli('--help'),
      cli('help', 'keys'),
      cli('keys', '--help'),
      cli('help', 'nosuch'),
    ]);
    expect(help).toEqual({ code: 0, stdout: `${USAGE}\n`, stderr: '' });
    expect(dashHelp).toEqual(help);
    expect(helpKeys).toEqual({ code: 0, stdout: `${helpText(['keys'])}\n`, stderr: '' });
    expect(keysHelp).toEqual(helpKeys);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('error: unknown command "nosuch"');
  });
});
