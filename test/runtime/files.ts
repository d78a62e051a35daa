// Program files (the fixtures under test/runtime/programs, the shipped examples) run on
// in-process nodes (harness.ts), loaded as `luna run` loads them: the program compiled, its
// TypeScript ucodes bundled, its C++ ucodes built. Each node imports its own instance of the
// ucode module with LUNA_RANK set, as each node process does; what the ucodes print is
// collected as the run's stdout.
import { pathToFileURL } from 'node:url';
import { format } from 'node:util';
import { ArgsError } from '../../src/program/args.js';
import { loadProgram, type Loaded } from '../../src/program/load.js';
import { runInProcess, type HarnessNode, type HarnessOptions, type Ucodes } from './harness.js';
import { lines } from './helpers.js';

export interface FileRun {
  ok: boolean;
  /** 'usage': main's arguments were refused (the CLI's exit 2) */
  kind?: 'fault' | 'hang' | 'lost' | 'interrupted' | 'usage';
  message?: string;
  /** what the ucodes printed, line by line, in the order they ran */
  stdout: string[];
  nodes: HarnessNode[];
}

export interface FileOptions extends Omit<HarnessOptions, 'args' | 'native'> {
  args?: readonly string[];
  /** `-D` macros: `NAME=value`, or `NAME` (defined as 1) */
  defines?: readonly string[];
}

const loaded = new Map<string, Promise<Loaded>>();

/** The file loaded once per test process and set of defines (bundling is the slow part). */
function load(file: string, defines: readonly string[]): Promise<Loaded> {
  const key = `${file}\0${defines.join('\0')}`;
  let l = loaded.get(key);
  const macro = (d: string): [string, string] => (d.includes('=') ? [d.slice(0, d.indexOf('=')), d.slice(d.indexOf('=') + 1)] : [d, '1']);
  if (!l) loaded.set(key, l = loadProgram(file, { defines: Object.fromEntries(defines.map(macro)) }));
  return l;
}

/** `file` run on `o.nodes` in-process nodes with `o.lanes` synchronous lanes each. */
export async function runFile(file: string, o: FileOptions = {}): Promise<FileRun> {
  const l = await load(file, o.defines ?? []);
  if (!l.program) throw new Error(`${file} does not load:\n${l.text}`);
  const out: string[] = [];
  const mods: Ucodes[] = [];
  for (let node = 0; node < (o.nodes ?? 1); node++) mods.push(capturing(await moduleFor(l.bundle?.file, node), out));
  try {
    const r = await runInProcess(l.program, (node) => mods[node]!, { inline: true, ...o, args: [...o.args ?? []], native: l.bundle?.native });
    return { ok: r.ok, kind: r.kind, message: r.message, stdout: lines(out.join('')), nodes: r.nodes };
  } catch (e) {
    if (!(e instanceof ArgsError)) throw e;
    return { ok: false, kind: 'usage', message: e.message, stdout: [], nodes: [] };
  }
}

/** Node `node`'s own instance of the bundled ucode module (module state is per node, as per process). */
async function moduleFor(bundle: string | undefined, node: number): Promise<Ucodes> {
  if (!bundle) return {};
  const before = process.env.LUNA_RANK;
  process.env.LUNA_RANK = String(node);
  try {
    return (await import(`${pathToFileURL(bundle).href}?node=${node}`)) as Ucodes;
  } finally {
    if (before === undefined) delete process.env.LUNA_RANK; else process.env.LUNA_RANK = before;
  }
}

/** The module's functions, with what they print while they run appended to `out`. */
function capturing(mod: Ucodes, out: string[]): Ucodes {
  const wrapped: Ucodes = {};
  for (const [name, f] of Object.entries(mod)) {
    wrapped[name] = typeof f !== 'function' ? f : (...args: unknown[]): unknown => {
      const log = console.log, write = process.stdout.write;
      console.log = (...a: unknown[]) => { out.push(format(...a) + '\n'); };
      process.stdout.write = ((chunk: unknown, ...rest: unknown[]) => {
        out.push(String(chunk));
        const cb = rest.find((x) => typeof x === 'function') as ((e: Error | null) => void) | undefined;
        cb?.(null);
        return true;
      }) as typeof process.stdout.write;
      try { return (f as (...a: unknown[]) => unknown)(...args); } finally { console.log = log; process.stdout.write = write; }
    };
  }
  return wrapped;
}
