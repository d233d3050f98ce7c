import path from 'node:path';
import { endpoints } from '@imagegen/contract';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The SDK's types come from the contract: the TypeScript compiler, run on a file of calls a user
 * writes (fixtures/typed-calls.ts), accepts the valid ones and refuses each wrong field, type,
 * missing field, enum member, path and answer field, on exactly the lines marked so.
 */

const root = path.resolve(import.meta.dirname, '../../..');
const fixture = path.join(import.meta.dirname, 'fixtures/typed-calls.ts');

function programOf(file: string): ts.Program {
  const config = ts.readConfigFile(path.join(root, 'tsconfig.base.json'), ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
  return ts.createProgram([file], { ...options, noEmit: true });
}

function compile(): { line: number; message: string }[] {
  const program = programOf(fixture);
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

type FieldBounds = Record<string, string | number | boolean>;

/** The bounds the SDK's types hold for every path, each a literal read back by the compiler. */
function typedBounds(): Record<string, Record<string, FieldBounds>> {
  const file = path.join(import.meta.dirname, 'fixtures/request-bounds.ts');
  const program = programOf(file);
  const checker = program.getTypeChecker();
  const alias = program.getSourceFile(file)!.statements.find(ts.isTypeAliasDeclaration)!;
  const members = (type: ts.Type) =>
    checker
      .getPropertiesOfType(type)
      .map((symbol) => [symbol.name, checker.getTypeOfSymbol(symbol)] as const);
  const literal = (type: ts.Type) =>
    type.isNumberLiteral() || type.isStringLiteral()
      ? type.value
      : checker.typeToString(type) === 'true' || checker.typeToString(type);
  return Object.fromEntries(
    members(checker.getTypeAtLocation(alias.name)).map(([pipeline, fields]) => [
      pipeline,
      Object.fromEntries(
        members(fields).map(([field, bounds]) => [
          field,
          Object.fromEntries(members(bounds).map(([name, value]) => [name, literal(value)])),
        ]),
      ),
    ]),
  );
}

interface NumberSchema {
  type?: string;
  anyOf?: NumberSchema[];
  items?: NumberSchema;
  exclusiveMinimum?: number;
  minimum?: number;
  exclusiveMaximum?: number;
  maximum?: number;
}

/** The bounds a field's JSON Schema holds, in the same shape: what the API checks. */
function schemaBounds(schema: NumberSchema): FieldBounds | undefined {
  if (schema.anyOf) return schema.anyOf.map(schemaBounds).find(Boolean);
  if (schema.type === 'array' && schema.items) {
    const items = schemaBounds(schema.items);
    return items && { ...items, items: true };
  }
  if (schema.type !== 'integer' && schema.type !== 'number') return undefined;
  const { exclusiveMinimum: gt, minimum: ge, exclusiveMaximum: lt, maximum: le } = schema;
  const bounds = Object.entries({ gt, ge, lt, le }).filter(([, value]) => value !== undefined);
  return bounds.length > 0 ? { kind: schema.type, ...Object.fromEntries(bounds) } : undefined;
}

describe('the bounds the typed calls check', () => {
  it("are the schemas' own, every bound a literal, for every path and number field", () => {
    const expected = Object.fromEntries(
      endpoints
        .filter((endpoint) => ['generation', 'load_model', 'training'].includes(endpoint.kind))
        .map((endpoint) => {
          const properties = (endpoint.request as { properties: Record<string, NumberSchema> }).properties;
          const fields = Object.entries(properties).flatMap(([name, schema]) => {
            const bounds = schemaBounds(schema);
            return bounds ? [[name, bounds] as const] : [];
          });
          return [endpoint.path, Object.fromEntries(fields)];
        }),
    );
    expect(Object.keys(expected).length).toBeGreaterThan(20);
    expect(expected['/sd/text2image/v1']?.samples).toEqual({ kind: 'integer', gt: 0, le: 4 });
    expect(typedBounds()).toEqual(expected);
  });
});
