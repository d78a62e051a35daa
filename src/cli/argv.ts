// The command line before and around commander: the original LuNA driver form and its option
// spellings, bounded numeric options, a misspelt command word, and `-o -` for standard output.
import { existsSync } from 'node:fs';
import { CommanderError } from 'commander';

/** Option spellings of the original LuNA driver, mapped to ours (both `--opt v` and `--opt=v`). */
const LEGACY_OPTIONS: Record<string, string> = { '--worker-threads-count': '--threads' };

function renameLegacy(a: string): string {
  const eq = a.indexOf('=');
  const name = eq < 0 ? a : a.slice(0, eq);
  const ours = LEGACY_OPTIONS[name];
  return ours === undefined ? a : ours + (eq < 0 ? '' : a.slice(eq));
}

/**
 * The original driver form `luna [options] prog.fa [args…]` becomes `run …`, with the original's
 * option names translated (main's arguments are numbers and strings, never such option names,
 * so every word before a `--` is translated).
 */
export function normalizeArgv(argv: string[], commands: ReadonlySet<string>): string[] {
  const first = argv.find((a) => !a.startsWith('-'));
  const head = argv[0];
  const isDriver = head !== undefined && !commands.has(head) && !['--help', '-h', '--version', '-V'].includes(head) && first !== undefined && !commands.has(first);
  const end = argv.indexOf('--');
  const out = argv.map((a, i) => ((end < 0 || i < end) && a.startsWith('--') ? renameLegacy(a) : a));
  return isDriver ? ['run', ...out] : out;
}

/** `--threads`, `--nodes`: an integer in 1..max, else a usage error naming the option. */
export function boundedInt(name: string, max: number, why: string) {
  return (v: string): number => {
    const n = Number(v);
    if (!/^\s*\d+\s*$/.test(v) || !Number.isInteger(n) || n < 1) throw new CommanderError(2, 'luna.badArg', `error: ${name} must be a positive integer, got ${JSON.stringify(v)}`);
    if (n > max) throw new CommanderError(2, 'luna.badArg', `error: ${name} ${n}: at most ${max} (${why})`);
    return n;
  };
}

/**
 * Edit distance (insertions, deletions, substitutions, transpositions of neighbours) between two
 * short words. Commander suggests misspelt subcommands itself, but a first word that is not a
 * command is taken as a program file (the driver form), so that word is compared here.
 */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/** The command `word` probably meant (a close name; none when `word` is far from all). */
export function closestCommand(word: string, commands: Iterable<string>): string | undefined {
  let best: string | undefined, bestD = Infinity;
  for (const c of commands) {
    const d = editDistance(word.toLowerCase(), c);
    if (d < bestD) { best = c; bestD = d; }
  }
  // a third of the word's length, at most 2: `analyse` → analyze, `chek` → check, `foo` → none
  return best !== undefined && bestD <= Math.min(2, Math.floor(word.length / 3)) ? best : undefined;
}

/**
 * `luna analyse …`: the program file does not exist and its name is close to a command. Prints
 * the suggestion and returns 2; undefined when `file` may well be meant as a program.
 */
export function misspeltCommand(file: string, commands: Iterable<string>): number | undefined {
  if (existsSync(file) || /[./\\]/.test(file)) return undefined;
  const cmd = closestCommand(file, commands);
  if (cmd === undefined) return undefined;
  process.stderr.write(`luna: error: ${JSON.stringify(file)} is neither a command nor a program file: did you mean \`luna ${cmd}\`?\n`);
  return 2;
}

/** `-o -` means standard output (file descriptor 1). */
export function outputTarget(out: string): string | number {
  return out === '-' ? 1 : out;
}
