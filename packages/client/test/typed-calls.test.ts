import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The SDK's types come from the contract: the TypeScript compiler, run on a file of calls a user
 * writes (fixtures/typed-calls.ts), accepts the valid ones and refuses each wrong field, type,
 * missing field, enum member, path and answer field, on exactly the lines marked so.
 */

const root = path.resolve(import.meta.dirname, '../../..');
const fixture = path.join(import.meta.dirname, 'fixtures/typed-calls.ts');

function compile(): { line: number; message: string }[] {
  const config = ts.readConfigFile(path.join(root, 'tsconfig.base.json'), ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
  const program = ts.createProgram([fixture], { ...options, noEmit: true });
  return ts
    .getPreEmitDiagnostics(program)
    .filter((diagnostic) => diagnostic.file)
    .map((diagnostic) => ({
      line: diagnostic.file!.getLineAndCharacterOfPosition(diagnostic.start ?? 0).line + 1,
      message: `${path.relative(root, diagnostic.file!.fileName)}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`,
    }));
}

describe('the typed calls', () => {
  it('fail to compile exactly where a call does not fit the contract, and say why', async () => {
    const source = ts.sys.readFile(fixture) ?? '';
    const expected = source.split('\n').flatMap((text, n) => {
      const marker = /;\s*\/\/ error: (.+)$/.exec(text);
      return marker ? [{ line: n + 1, text: marker[1]! }] : [];
    });
    expect(expected.length).toBeGreaterThan(10);
    const diagnostics = compile();
    const unexpected = diagnostics.filter((d) => !expected.some((e) => e.line === d.line));
    expect(unexpected).toEqual([]);
    for (const { line, text } of expected) {
      const messages = diagnostics.filter((d) => d.line === line).map((d) => d.message);
      expect(messages.join('\n'), `line ${line}`).toContain(text);
    }
  });
});
