import { UsageError } from './exit-codes.ts';

/**
 * The command line split into positionals and flag values. A flag that takes a value takes the
 * next word whatever it looks like (`--seed -1`), or its `=` part; a switch is `--name`,
 * `--no-name` or `--name=true|false`. `--negative_prompt` is `--negative-prompt`. `--` ends the
 * flags.
 */

export interface FlagSpec {
  readonly flag: string;
  /** false: a switch. */
  readonly takesValue: boolean;
}

export interface ParsedArgs {
  readonly positionals: string[];
  /** Every value given to each flag, in order (switches: `true` or `false`). */
  readonly values: Map<string, string[]>;
}

export function parseArgs(argv: readonly string[], specs: readonly FlagSpec[]): ParsedArgs {
  const byFlag = new Map(specs.map((spec) => [spec.flag, spec]));
  const positionals: string[] = [];
  const values = new Map<string, string[]>();
  const add = (flag: string, value: string) => values.set(flag, [...(values.get(flag) ?? []), value]);
  for (let n = 0; n < argv.length; n++) {
    const word = argv[n]!;
    if (word === '--') {
      positionals.push(...argv.slice(n + 1));
      break;
    }
    if (!word.startsWith('--')) {
      positionals.push(word);
      continue;
    }
    const equals = word.indexOf('=');
    const name = `--${(equals < 0 ? word.slice(2) : word.slice(2, equals)).replaceAll('_', '-')}`;
    const inline = equals < 0 ? undefined : word.slice(equals + 1);
    const spec = byFlag.get(name);
    const negated = !spec && name.startsWith('--no-') ? byFlag.get(`--${name.slice(5)}`) : undefined;
    if (negated && !negated.takesValue && inline === undefined) {
      add(negated.flag, 'false');
      continue;
    }
    if (!spec) throw new UsageError(`unknown flag ${name}${suggestion(name, specs)}`);
    if (!spec.takesValue) {
      add(spec.flag, inline ?? 'true');
      continue;
    }
    const value = inline ?? argv[++n];
    if (value === undefined) throw new UsageError(`${name} needs a value`);
    add(spec.flag, value);
  }
  return { positionals, values };
}

/** `; did you mean --samples?` for a flag one or two edits away from a known one. */
function suggestion(name: string, specs: readonly FlagSpec[]): string {
  const near = specs.find((spec) => distance(spec.flag, name) <= 2);
  return near ? `; did you mean ${near.flag}?` : '';
}

function distance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, n) => n);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    row = next;
  }
  return row[b.length]!;
}
