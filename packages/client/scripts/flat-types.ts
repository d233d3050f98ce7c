import ts from 'typescript';

/**
 * src/types.ts as a declaration file that needs neither the contract nor TypeBox: each type read
 * from the contract's table (the per-path maps, the path unions, the shapes of the 422 and upload
 * answers) is printed out in full by the compiler; the generic aliases over them stay as written.
 * An installed copy of the package is then typed as precisely as the repository's source.
 */

/** The aliases made from the contract that the others use; the build prints each one out. */
const PRINTED = new Set([
  'TaskPath',
  'ReadPath',
  'Requests',
  'Bounds',
  'Accepted',
  'Statuses',
  'ReadAnswers',
  'Queries',
  'QueryBounds',
  'ValidationIssue',
  'UploadAnswer',
  'DeletedModelAnswer',
  'WebhookDelivery',
]);
/** What only the printed aliases used. */
const DROPPED = new Set(['Rows', 'TaskRow', 'ReadRow', 'RecordRow']);

const PRINT_FLAGS =
  ts.TypeFormatFlags.NoTruncation |
  ts.TypeFormatFlags.InTypeAlias |
  ts.TypeFormatFlags.UseSingleQuotesForStringLiteralType;

export function flatTypes(file: string): string {
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2023,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    strict: true,
    allowImportingTsExtensions: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
  };
  const program = ts.createProgram([file], options);
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file);
  if (!source) throw new Error(`cannot read ${file}`);
  const text = source.getFullText();
  const parts = ["// Built from src/types.ts by scripts/flat-types.ts: the contract's types, printed out.\n"];
  const printed = new Set<string>();
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement)) continue;
    if (!ts.isTypeAliasDeclaration(statement)) {
      parts.push(text.slice(statement.getFullStart(), statement.getEnd()));
      continue;
    }
    const name = statement.name.text;
    if (DROPPED.has(name)) continue;
    if (!PRINTED.has(name)) {
      parts.push(text.slice(statement.getFullStart(), statement.getEnd()));
      continue;
    }
    const type = checker.getTypeAtLocation(statement.name);
    const spelled = spell(checker, type, statement);
    const head = text.slice(statement.getFullStart(), statement.getStart());
    const exported = statement.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)
      ? 'export '
      : '';
    parts.push(`${head}${exported}type ${name} = ${spelled};`);
    printed.add(name);
  }
  const missing = [...PRINTED].filter((name) => !printed.has(name));
  if (missing.length > 0) throw new Error(`src/types.ts no longer declares ${missing.join(', ')}`);
  const result = `${parts.join('').trim()}\n`;
  if (
    /\bStatic<|TypedEndpoint|from 'typebox'|@imagegen\/contract/.test(
      result.replace(/\/\*\*[\s\S]*?\*\//g, ''),
    )
  ) {
    throw new Error('the flat types still refer to the contract or TypeBox');
  }
  return result;
}

/** A map type property by property (each spelled in full), any other type as the compiler prints it. */
function spell(checker: ts.TypeChecker, type: ts.Type, at: ts.Node): string {
  const properties = type.isUnion() ? [] : checker.getPropertiesOfType(type);
  if (properties.length === 0 || type.isUnion()) return checker.typeToString(type, at, PRINT_FLAGS);
  const members = properties.map((property) => {
    const value = checker.getTypeOfSymbolAtLocation(property, at);
    const optional = property.flags & ts.SymbolFlags.Optional ? '?' : '';
    return `  ${JSON.stringify(property.name)}${optional}: ${checker.typeToString(value, at, PRINT_FLAGS)};`;
  });
  return `{\n${members.join('\n')}\n}`;
}
