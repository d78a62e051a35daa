// main's command line: the program arguments after the .fa file feed main's int, real and
// string parameters, in order. Checked before anything runs, so a bad command line is a usage
// error (exit 2) with the parameter it concerns, never a run-time fault.
import type { SubTemplate } from './compile.js';

export class ArgsError extends Error {}

const INT_MIN = -2147483648, INT_MAX = 2147483647;

function signature(main: SubTemplate): string {
  return main.params.length === 0 ? 'main()' : `main(${main.params.map((p) => `${p.type} ${p.name}`).join(', ')})`;
}

/** The values of main's parameters, by parameter order; throws ArgsError naming the culprit. */
export function parseMainArgs(main: SubTemplate, args: readonly string[]): (number | string)[] {
  const ps = main.params;
  if (args.length !== ps.length) {
    const what = args.length < ps.length ? 'too few' : 'too many';
    throw new ArgsError(`${what} program arguments: ${signature(main)} needs ${ps.length}, ${args.length} given`);
  }
  return ps.map((p, i) => {
    const raw = args[i]!;
    const which = `argument ${i + 1} (${p.type} ${p.name})`;
    switch (p.type) {
      case 'int': {
        if (!/^\s*[-+]?\d+\s*$/.test(raw)) throw new ArgsError(`${which} is not an integer: ${JSON.stringify(raw)}`);
        const n = Number(raw);
        if (n < INT_MIN || n > INT_MAX) throw new ArgsError(`${which} = ${raw.trim()} does not fit a 32-bit int (${INT_MIN}..${INT_MAX})`);
        return n | 0;
      }
      case 'real': {
        const x = Number(raw);
        if (raw.trim() === '' || !Number.isFinite(x)) throw new ArgsError(`${which} is not a finite number: ${JSON.stringify(raw)}`);
        return x;
      }
      case 'string': return raw;
      default: throw new ArgsError(`main cannot take a ${p.type} parameter (${p.name})`);
    }
  });
}
