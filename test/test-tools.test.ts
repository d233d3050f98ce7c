import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

/**
 * test/test-tools.sh, the check `npm test` runs first, on a machine made to lack a tool without
 * uninstalling anything: each tool is looked for where its variable points (a temporary folder),
 * and PATH holds only a folder of our own, with or without a stand-in apt-get that logs its calls.
 */

const SCRIPT = path.join(import.meta.dirname, 'test-tools.sh');
const asRoot = process.getuid?.() === 0;

let dir: string;
let bin: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'imagegen-test-tools-'));
  bin = path.join(dir, 'bin');
  await mkdir(bin);
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function program(file: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, '#!/bin/sh\n');
  await chmod(file, 0o755);
}

/** Where each tool is looked for in these runs: CHROMIUM_PATH, PROMETHEUS_PATH, PG_BIN. */
const places = () => ({
  CHROMIUM_PATH: path.join(dir, 'chromium'),
  PROMETHEUS_PATH: path.join(dir, 'prometheus'),
  PG_BIN: path.join(dir, 'pg15'),
});

function check(tools: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('/bin/bash', [SCRIPT, ...tools], { env: { PATH: bin, ...places() } }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
    );
  });
}

/** An apt-get that logs its arguments and, when `installs`, puts the programs where they are looked for. */
async function fakeAptGet(installs: boolean): Promise<string> {
  const log = path.join(dir, 'apt-get.log');
  const { CHROMIUM_PATH, PROMETHEUS_PATH, PG_BIN } = places();
  const make = installs
    ? [
        `for each in "${CHROMIUM_PATH}" "${PROMETHEUS_PATH}" "${PG_BIN}/postgres"; do`,
        '  echo "#!/bin/sh" > "$each"; /bin/chmod +x "$each"',
        'done',
      ]
    : [];
  await mkdir(path.join(dir, 'pg15'), { recursive: true });
  await writeFile(
    path.join(bin, 'apt-get'),
    ['#!/bin/bash', `echo "$*" >> "${log}"`, 'if [ "$1" = install ]; then', ':', ...make, 'fi', ''].join(
      '\n',
    ),
  );
  await chmod(path.join(bin, 'apt-get'), 0o755);
  return log;
}

describe('test/test-tools.sh', () => {
  it('passes in silence when every tool asked for is there', async () => {
    await program(places().CHROMIUM_PATH);
    await program(places().PROMETHEUS_PATH);
    await program(path.join(places().PG_BIN, 'postgres'));
    expect(await check(['chromium', 'prometheus', 'postgresql-15'])).toEqual({
      code: 0,
      stdout: '',
      stderr: '',
    });
  });

  it('without apt-get, stops naming the missing programs and the exact command that installs them', async () => {
    await program(places().CHROMIUM_PATH);
    const { code, stderr } = await check(['chromium', 'prometheus', 'postgresql-15']);
    expect(code).toBe(1);
    expect(stderr).toContain(
      `the tests need ${places().PROMETHEUS_PATH} ${places().PG_BIN}/postgres, which this machine lacks`,
    );
    const sudo = asRoot ? '' : 'sudo ';
    expect(stderr).toContain(
      `  ${sudo}apt-get update && ${sudo}apt-get install -y --no-install-recommends prometheus postgresql-15\n`,
    );
  });

  it('asks only for what it was given: the PostgreSQL 15 check is apart', async () => {
    await program(places().CHROMIUM_PATH);
    await program(places().PROMETHEUS_PATH);
    expect((await check(['chromium', 'prometheus'])).code).toBe(0);
    expect((await check(['postgresql-15'])).stderr).toContain(
      'install -y --no-install-recommends postgresql-15',
    );
  });

  it.runIf(asRoot)('as root with apt-get, installs the missing packages and goes on', async () => {
    const log = await fakeAptGet(true);
    await program(places().PROMETHEUS_PATH);
    const { code, stderr } = await check(['chromium', 'prometheus']);
    expect(code, stderr).toBe(0);
    expect(await readFile(log, 'utf8')).toBe(
      'update -qq\ninstall -y -qq --no-install-recommends chromium fonts-dejavu-core\n',
    );
    expect(stderr).toContain(`installing them: apt-get update && apt-get install`);
  });

  it.runIf(asRoot)(
    'fails naming the program when the install did not put it where it is looked for',
    async () => {
      await fakeAptGet(false);
      const { code, stderr } = await check(['prometheus']);
      expect(code).toBe(1);
      expect(stderr).toContain(`still missing after the install: ${places().PROMETHEUS_PATH}`);
    },
  );

  it('refuses a tool it does not know', async () => {
    const { code, stderr } = await check(['firefox']);
    expect(code).toBe(2);
    expect(stderr).toContain("unknown tool 'firefox'");
  });
});
