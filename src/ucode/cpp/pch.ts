// A precompiled ucenv.h (GCC's .gch), shared by every program this user builds. Parsing ucenv.h's
// standard headers is most of a C++ unit's first compile (g++ 12, -O2: 0.8 of 1.3 s of CPU for
// examples/matmul-cpp), and the library cache (build.ts) misses for every program in a new
// directory. With the header precompiled a unit takes ~0.65 s less; making the .gch takes
// 2.5–4 s, once per compiler, flags, environment and ucenv.h (docs/benchmarks.md, "The C++
// build's first compile: a precompiled ucenv.h").
//
// Mechanism only; build.ts decides when to use it. Never a reason for a build to fail: any
// problem (no cache directory, another process making it, a .gch GCC refuses) means the unit is
// compiled as before. GCC checks the .gch against its own version and the flags; what it does not
// check is in the key (ucenv.h's and its ABI header's contents, the compiler's environment) or in
// the entry (every header the .gch was made from, by size and modification time).
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseDepFile, runProgram, type Compiler } from './compiler.js';

/** Bumped when the entry's layout changes: old entries are then ignored. */
const FORMAT = 1;
/** Another process's build older than this is taken for dead (a .gch takes 2–4 s at load 5; 60 s at load 20 would be extreme). */
const LOCK_STALE_MS = 10 * 60_000;
/** After a .gch failed to build or GCC refused it, builds go without one this long before trying again. */
const RETRY_AFTER_MS = 24 * 3600_000;
/** The compiler's environment that changes what a header means (GCC does not check these against a .gch). */
const COMPILER_ENV = ['CPATH', 'CPLUS_INCLUDE_PATH', 'C_INCLUDE_PATH', 'GCC_EXEC_PREFIX', 'COMPILER_PATH'];

/** What became of the precompiled header in a build (recorded in the library's cache entry). */
export type PchState =
  | 'used' // an existing .gch
  | 'built' // made by this build, beside its units (which compiled without it)
  | 'refused' // GCC did not take it: the units compiled from ucenv.h itself
  | 'noted' // the first build that wanted it: the next one makes it
  | 'busy' // another process was making it
  | 'failed' // it could not be made (or was refused recently)
  | 'off' // LUNA_PCH_DIR is empty, or there is no cache directory
  | 'unsupported' // not GCC, or a wrapper (ccache) in CXX
  | 'unsuitable'; // no unit starts with ucenv.h

export interface Pch {
  key: string;
  /** pass `-Winvalid-pch -include <header>`: GCC takes <header>.gch, else reads <header> (which includes ucenv.h) */
  header: string;
  /** the entry's directory */
  dir: string;
}

export type PchPlan =
  | { state: 'ready'; pch: Pch }
  | { state: 'make'; pch: Pch; make: () => Promise<boolean> }
  | { state: Exclude<PchState, 'used' | 'built' | 'refused' | 'unsuitable'>; why: string };

/**
 * Where precompiled headers live: LUNA_PCH_DIR (empty: none), else pch/ in LUNA_CACHE_DIR when it
 * is set (the tests' one temporary cache), else $XDG_CACHE_HOME/luna-ts/pch, else
 * ~/.cache/luna-ts/pch (one per user, not one per program directory as the ucode cache).
 */
export function pchRoot(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.LUNA_PCH_DIR !== undefined) return env.LUNA_PCH_DIR.trim() ? resolve(env.LUNA_PCH_DIR.trim()) : undefined;
  if (env.LUNA_CACHE_DIR?.trim()) return join(resolve(env.LUNA_CACHE_DIR.trim()), 'pch');
  const base = env.XDG_CACHE_HOME?.trim() || (() => { try { return join(homedir(), '.cache'); } catch { return undefined; } })();
  return base ? join(base, 'luna-ts', 'pch') : undefined;
}

/**
 * Whether precompiling ucenv.h leaves this source's meaning unchanged: the header goes first in
 * the unit (-include), so before the source's own `#include "ucenv.h"` only comments and standard
 * headers (`#include <name>`, which do not depend on their order) may come, and no ucenv.h of its
 * own may sit beside it (a quoted include looks there first).
 */
export function startsWithUcenv(text: string, ownHeaderBeside: boolean): boolean {
  if (ownHeaderBeside) return false;
  const rest = text.replace(/\/\*[\s\S]*?\*\//g, ' ');
  for (const raw of rest.split('\n')) {
    const line = raw.replace(/\/\/.*$/, '').trim();
    if (line === '') continue;
    if (/^#\s*include\s*[<"]ucenv\.h[>"]$/.test(line)) return true;
    if (/^#\s*include\s*<[A-Za-z0-9_]+(\.h)?>$/.test(line)) continue;
    return false;
  }
  return false;
}

const sha = (s: string | Uint8Array): string => createHash('sha256').update(s).digest('hex').slice(0, 16);

interface Entry {
  format: number;
  /** every header the .gch was made from: path, size, mtime (ms) */
  inputs: [string, number, number][];
}

function unchanged(inputs: Entry['inputs']): boolean {
  for (const [path, size, mtime] of inputs) {
    try {
      const st = statSync(path);
      if (st.size !== size || Math.round(st.mtimeMs) !== mtime) return false;
    } catch { return false; }
  }
  return true;
}

function fresh(file: string, ms: number): boolean {
  try { return Date.now() - statSync(file).mtimeMs < ms; } catch { return false; }
}

/** Whether process `pid` still runs (EPERM: it does, as another user's). */
function alive(pid: number): boolean {
  try { process.kill(pid, 0); return true; } catch (e) { return (e as NodeJS.ErrnoException).code === 'EPERM'; }
}

/** Take the key's lock (an exclusive file holding our pid), or say who holds it. */
function lock(file: string): boolean {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') return false;
      let pid = 0;
      try { pid = Number(readFileSync(file, 'utf8')) || 0; } catch { /* gone meanwhile: try again */ }
      // (no pid yet: its maker is between creating the file and writing to it)
      if (pid === 0 ? fresh(file, 10_000) : alive(pid) && fresh(file, LOCK_STALE_MS)) return false;
      rmSync(file, { force: true }); // its maker died: take it over
    }
  }
  return false;
}

/**
 * The precompiled ucenv.h for units compiled with `common` (the compiler's command and every
 * flag but the unit's own: -c, -o, -MMD -MF), as it stands: ready to use, to be made by the
 * caller (`make`, beside its units), or why there is none.
 */
export async function planPch(compiler: Compiler, common: readonly string[], include: string, env: NodeJS.ProcessEnv = process.env): Promise<PchPlan> {
  const root = pchRoot(env);
  if (!root) return { state: 'off', why: 'LUNA_PCH_DIR is empty (or no home directory)' };
  if (compiler.argv.length > 1) return { state: 'unsupported', why: `CXX runs the compiler through ${compiler.argv[0]}` };
  const header = join(include, 'ucenv.h');
  let ucenv: Buffer;
  let abi: Buffer;
  try {
    ucenv = readFileSync(header);
    abi = readFileSync(join(include, 'luna_ucode_abi.h'));
  } catch { return { state: 'failed', why: 'ucenv.h unreadable' }; }
  const key = sha(JSON.stringify({
    FORMAT, compiler: compiler.identity, common, include, ucenv: sha(ucenv), abi: sha(abi),
    env: COMPILER_ENV.map((k) => env[k] ?? null),
  }));
  const dir = join(root, key);
  const pch: Pch = { key, dir, header: join(dir, 'ucenv.h') };
  const failedMark = join(root, `${key}.failed`);
  if (fresh(failedMark, RETRY_AFTER_MS)) return { state: 'failed', why: 'failed or refused in the last day' };
  try {
    const entry = JSON.parse(readFileSync(join(dir, 'entry.json'), 'utf8')) as Entry;
    if (entry.format === FORMAT && existsSync(`${pch.header}.gch`) && unchanged(entry.inputs)) return { state: 'ready', pch };
  } catch { /* none yet, or half of one from an old version: made again */ }
  // GCC only: clang's .pch is another format, checked another way (not tried here: no clang on this machine)
  const version = (await runProgram(compiler.argv[0]!, ['--version'])).stdout;
  if (/clang/i.test(version) || !version.includes('Free Software Foundation')) return { state: 'unsupported', why: `not GCC: ${version.split('\n')[0]}` };
  try { mkdirSync(root, { recursive: true, mode: 0o700 }); } catch (e) { return { state: 'off', why: `${root}: ${(e as Error).message}` }; }
  // Made by the second build that wants it, not the first: making it costs 2.5–4 s of CPU (2.5
  // alone, ~4 at load 9, when the first build of examples/matmul-cpp took 6.7 s against 2.5) and
  // saves ~0.65 s a unit, so flags or a luna-ts version used for one build never pay for it.
  const wanted = join(root, `${key}.wanted`);
  if (!existsSync(wanted)) {
    try { writeFileSync(wanted, ''); } catch { /* then it is never made: still correct */ }
    return { state: 'noted', why: 'made when wanted a second time' };
  }
  const lockFile = join(root, `${key}.lock`);
  if (!lock(lockFile)) return { state: 'busy', why: 'another process is making it' };
  return { state: 'make', pch, make: () => make(compiler, common, header, pch, failedMark).finally(() => { rmSync(lockFile, { force: true }); rmSync(wanted, { force: true }); }) };
}

/** Make the entry in a directory of its own, then rename it into place (a reader sees all of it or nothing). */
async function make(compiler: Compiler, common: readonly string[], ucenv: string, pch: Pch, failedMark: string): Promise<boolean> {
  const tmp = `${pch.dir}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    mkdirSync(tmp, { mode: 0o700 });
    // read only when GCC refuses the .gch: ucenv.h itself, by its full path, as the unit would
    writeFileSync(join(tmp, 'ucenv.h'), `// luna-ts: the header precompiled beside this file\n#include ${JSON.stringify(ucenv)}\n`);
    const deps = join(tmp, 'deps.d');
    const r = await runProgram(compiler.argv[0]!, [...common, '-x', 'c++-header', ucenv, '-o', join(tmp, 'ucenv.h.gch'), '-MD', '-MF', deps], tmp);
    if (r.code !== 0) {
      writeFileSync(failedMark, `the compiler failed (exit ${r.code})\n${r.stderr.slice(0, 4000)}`);
      return false;
    }
    const inputs: Entry['inputs'] = [];
    for (const path of parseDepFile(readFileSync(deps, 'utf8'))) {
      const st = statSync(path);
      inputs.push([path, st.size, Math.round(st.mtimeMs)]);
    }
    const entry: Entry = { format: FORMAT, inputs };
    writeFileSync(join(tmp, 'entry.json'), JSON.stringify(entry));
    rmSync(deps);
    rmSync(pch.dir, { recursive: true, force: true }); // a stale one (a header changed)
    renameSync(tmp, pch.dir);
    return true;
  } catch {
    return false; // e.g. another process renamed its own into place first: that one serves
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** GCC did not take the .gch (corrupt, or made under other conditions): drop it, and go without for a while. */
export function refusePch(pch: Pch, why: string): void {
  try {
    writeFileSync(join(dirname(pch.dir), `${pch.key}.failed`), `refused by the compiler: ${why}\n`);
    rmSync(pch.dir, { recursive: true, force: true });
  } catch { /* the next build finds it again and refuses it again: still correct */ }
}

/**
 * How a unit compiled with the .gch went: GCC warns (-Winvalid-pch) when it did not take it, and
 * fails when it could not read it. `plain` says the unit must be compiled again without it: it
 * failed and its messages do not clearly stand at a line of the user's code. `stderr` is the
 * compiler's output without the .gch's own warnings.
 */
export function pchOutcome(pch: Pch, code: number, stderr: string): { refused?: string; plain: boolean; stderr: string } {
  const lines = stderr.split('\n');
  // GCC's own words about the .gch (the user's messages stand at a file:line, never at these)
  const about = (l: string): boolean => l.includes(pch.dir) || /^(cc1plus|<command-line>)\S*: .*\bPCH\b/.test(l);
  const refusedLines = lines.filter(about);
  const rest = lines.filter((l) => !about(l)).join('\n');
  const refused = refusedLines.length > 0 ? refusedLines[0]!.trim() : undefined;
  if (code === 0) return { refused, plain: false, stderr: rest };
  const located = /^(?!<command-line>)[^:\n]+:\d+:(?:\d+:)? (?:fatal error|error): /m.test(rest);
  return { refused, plain: refused !== undefined || !located, stderr: rest };
}
