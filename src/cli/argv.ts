// The command line before and around commander: the original LuNA driver form and its option
// spellings, bounded numeric options, a misspelt command word, and `-o -` for standard output.
import { existsSync } from 'node:fs';
import { CommanderError } from 'commander';
import { closest } from '../core/spelling.js';

/**
 * The original driver form `luna [options] prog.fa [args…]` becomes `run …` (its option
 * `--worker-threads-count` is an option of `run` under its own name, so messages name it).
 */
export function normalizeArgv(argv: string[], commands: ReadonlySet<string>): string[] {
  const first = argv.find((a) => !a.startsWith('-'));
  const head = argv[0];
  const isDriver = head !== undefined && !commands.has(head) && !['--help', '-h', '--version', '-V'].includes(head) && first !== undefined && !commands.has(first);
  return isDriver ? ['run', ...argv] : argv;
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

/** The command `word` probably meant (a close name; none when `word` is far from all). */
export function closestCommand(word: string, commands: Iterable<string>): string | undefined {
  // `analyse` → analyze, `chek` → check, `foo` → none
  return closest(word, commands);
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
