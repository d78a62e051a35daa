// The system C++ compiler: which one (CXX, default g++), with which flags (--cxxflags, else
// LUNA_CXXFLAGS, else -O3), and an identity for the cache that needs no process to compute
// (the resolved executable's path, size and modification time).
import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';

/**
 * The flags when neither --cxxflags nor LUNA_CXXFLAGS gives any: -O3, as the original LuNA's
 * driver. g++ 12 at -O2 vectorises only loops of a fixed small trip count: a C++ ucode is there
 * for its numeric kernel, and -O3 ran them 1.8–3.3× faster for 10–20 % more compile CPU (g++
 * 12.2, this host's AMD EPYC, load 6–10; kernels at 4–8 offsets from a 64-byte boundary, min of 5
 * rounds, 3 passes): matmul-cpp's block_mul on 160×160 blocks 1 346–1 700 µs a call at -O2,
 * 472–492 at -O3; Task Bench's compute_bound at 2^14 iterations 148–157 µs at -O2, 84–90 at -O3
 * (150 at 2 offsets of 8). Compile CPU of `g++ -c` (medians of 3, alternated): heat3d-cpp
 * 1.19 → 1.33 s, matmul-cpp 0.90 → 1.01, pic3d-cpp 3.07 → 3.70, Task Bench's ucodes 1.01 → 1.04;
 * text +25–40 %. Not added: -falign-loops=64, which fixes compute_bound's slow offsets, slowed
 * block_mul to 570–610 µs; -march=native, since a cached library may be loaded by a node on another processor.
 */
export const DEFAULT_CXXFLAGS = '-O3';

export interface Compiler {
  /** the command and the arguments CXX carries (e.g. `ccache g++`) */
  argv: string[];
  /** resolved executable */
  path: string;
  /** path, size and mtime of the executable: changes when the compiler is replaced */
  identity: string;
}

export class NoCompilerError extends Error {}

/** Split a flags string the way a shell would for plain words and simple quotes. */
export function splitFlags(s: string): string[] {
  const out: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g;
  for (let m = re.exec(s); m; m = re.exec(s)) out.push(m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : m[2] ?? m[3]!);
  return out;
}

/** The flags in force: the option, else LUNA_CXXFLAGS, else DEFAULT_CXXFLAGS. */
export function cxxFlags(option?: string): string[] {
  return splitFlags(option ?? process.env.LUNA_CXXFLAGS ?? DEFAULT_CXXFLAGS);
}

function executable(p: string): boolean {
  try {
    accessSync(p, constants.X_OK);
    return statSync(p).isFile();
  } catch { return false; }
}

function which(cmd: string): string | undefined {
  if (cmd.includes('/')) {
    const p = isAbsolute(cmd) ? cmd : resolve(cmd);
    return executable(p) ? p : undefined;
  }
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const p = join(dir, cmd);
    if (executable(p)) return p;
  }
  return undefined;
}

/** The compiler named by CXX (default g++), or NoCompilerError with what to do. */
export function findCompiler(): Compiler {
  const spec = process.env.CXX?.trim() || 'g++';
  const argv = splitFlags(spec);
  const found = which(argv[0]!);
  if (!found) {
    const named = process.env.CXX?.trim() ? `CXX=${spec}` : 'g++';
    throw new NoCompilerError(`no C++ compiler: ${named} was not found, so the C++ ucodes cannot be built (install one, e.g. \`apt-get install g++\`, or set CXX to its path)`);
  }
  const real = realpathSync(found);
  const st = statSync(real);
  return { argv, path: real, identity: `${real}:${st.size}:${Math.round(st.mtimeMs)}` };
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Run a program to the end, capturing its output (never throws for a non-zero exit); `env`: its
 * environment (default: this process's).
 * child_process is imported here, not at the top: a run whose ucodes are in the cache starts
 * no compiler and does not load it (with net, dgram and streams, several ms of start-up).
 */
export async function runProgram(cmd: string, args: readonly string[], cwd?: string, env?: NodeJS.ProcessEnv): Promise<RunResult> {
  const { execFile } = await import('node:child_process');
  return new Promise((done) => {
    execFile(cmd, args, { cwd, env, maxBuffer: 64 << 20, encoding: 'utf8' }, (err, stdout, stderr) => {
      const e = err as (NodeJS.ErrnoException & { code?: number | string }) | null;
      if (e && typeof e.code === 'string') { done({ code: 127, stdout: '', stderr: `${cmd}: ${e.message}` }); return; }
      done({ code: e ? (typeof e.code === 'number' ? e.code : 1) : 0, stdout, stderr });
    });
  });
}

/** First line of `CXX --version` (recorded in the cache entry, for people reading it). */
export async function compilerVersion(c: Compiler): Promise<string> {
  const r = await runProgram(c.argv[0]!, [...c.argv.slice(1), '--version']);
  return r.stdout.split('\n')[0]?.trim() ?? '';
}

/** The prerequisites in a make dependency file written by -MMD or -MD (what follows the target). */
export function parseDepFile(text: string): string[] {
  const joined = text.replace(/\\\r?\n/g, ' ');
  const colon = joined.search(/:(\s|$)/);
  const rest = colon < 0 ? joined : joined.slice(colon + 1);
  const out: string[] = [];
  const re = /((?:\\ |[^\s])+)/g;
  for (let m = re.exec(rest); m; m = re.exec(rest)) out.push(m[1]!.replace(/\\ /g, ' '));
  return out;
}
