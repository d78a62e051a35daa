// Running one program on either system, the same way: the original LuNA's runtime directly
// (compiled once with `bin/luna --compile-only`, so compilation is not timed; 2 ranks under
// mpirun over TCP, as docs/ORIGINAL.md says) and luna-ts's `bin/luna run` with the same .fa and
// ucodes.cpp, both compiled with CXXFLAGS. Both under GNU time (wall, peak memory), both
// timed in-program by their ucodes' timestamps (spans.ts).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { LUNA, LUNA_NODE_ENV, LUNA_NODE_FLAGS, retry, ROOT } from '../common.js';
import { parseRun, TIME_FORMAT, type Sample } from './spans.js';
import { followGroup } from '../sched.js';

export const GNU_TIME = '/usr/bin/time';
/**
 * The flags of every C++ build of the comparison: both systems' ucodes (the original through its
 * driver's CXX_FLAGS, to which it adds its own -O3; luna-ts through LUNA_CXXFLAGS) and the bare
 * peak kernel (bare-cpp.ts). -O3: the original's own. -falign-loops=64: the same instructions
 * ran 1.75× slower where the kernel's inner loop happened to land 24–32 bytes past a 64-byte
 * boundary (this host's AMD EPYC, g++ 12.2: compute_bound placed at 16 offsets, 2^14
 * iterations, min of 5 × 200 calls, 3 passes, load 10–14: 150–159 µs a call at 3–5 of the 16
 * offsets, 85–93 µs at the others; with the flag 81–89 µs at all 5 offsets tried). Which offset
 * a build gets depends on everything else in its object: luna-ts's ucodes and the bare kernel
 * got a slow one, the original's a fast one — its kernels did 1.7× the FLOPs per CPU-second
 * (docs/benchmarks.md, "Why the original's efficiency was twice its busy share").
 */
export const CXXFLAGS = '-O3 -falign-loops=64';

/** The environment of the original's compiler driver: CXX_FLAGS carries CXXFLAGS (it adds -O3 and its warnings). */
export function originalCompileEnv(home: string, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return { ...env, LUNA_HOME: home, PATH: `${join(home, 'bin')}:${env.PATH ?? ''}`, CXX_FLAGS: CXXFLAGS };
}

/** The environment of a luna-ts run of the comparison: its C++ ucodes compiled with CXXFLAGS. */
export function lunaTsEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return { ...env, ...LUNA_NODE_ENV, LUNA_CXXFLAGS: CXXFLAGS };
}

/** Where a placement runs: processes (ranks, nodes) × worker threads each. */
export interface Placement { ranks: 1 | 2; threads: number }

/** The original's build named by LUNA_ORIGINAL, checked; undefined when the variable is unset. */
export function originalHome(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const v = env.LUNA_ORIGINAL;
  if (!v) return undefined;
  const home = resolve(v);
  for (const f of ['bin/luna', 'bin/rts', 'lib/librts.so'])
    if (!existsSync(join(home, f))) throw new Error(`LUNA_ORIGINAL=${v}: no ${f} there (build the original LuNA as docs/benchmarks.md says)`);
  return home;
}

interface Out { code: number | null; signal: NodeJS.Signals | null; output: string; timedOut: boolean }

/** A command in its own process group (a timeout kills it and what it started); stdout and stderr together. */
function exec(cmd: string, args: string[], o: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs: number }): Promise<Out> {
  return new Promise((res, rej) => {
    const child = spawn(cmd, args, { cwd: o.cwd, env: o.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    followGroup(child.pid);
    let output = '';
    const keep = (d: Buffer): void => { if (output.length < 1 << 20) output += d.toString(); };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try { process.kill(-child.pid!, 'SIGKILL'); } catch { child.kill('SIGKILL'); }
    }, o.timeoutMs);
    child.on('error', (e) => { clearTimeout(timer); rej(e); });
    child.on('close', (code, signal) => { clearTimeout(timer); res({ code, signal, output, timedOut }); });
  });
}

function failure(what: string, r: Out, timeoutMs: number): Error {
  const lines = r.output.trim().split('\n');
  // a compiler's first error says more than the make lines after it
  const first = lines.findIndex((l) => /\berror\b/i.test(l));
  const head = (first >= 0 ? lines.slice(first, first + 3) : lines.slice(-6)).map((l) => l.trim()).join(' | ');
  return new Error(`${what}: exit ${r.code ?? r.signal}${r.timedOut ? ` (no end after ${timeoutMs / 1000} s, killed)` : ''}: ${head}`);
}

async function timed(what: string, cmd: string[], o: { cwd?: string; env: NodeJS.ProcessEnv; timeoutMs: number }): Promise<Sample> {
  let sample: Sample | undefined;
  await retry(what, async () => {
    const r = await exec(GNU_TIME, ['-f', TIME_FORMAT, ...cmd], o);
    if (r.code !== 0) throw failure(what, r, o.timeoutMs);
    sample = parseRun(r.output);
    return sample.spanMs;
  });
  return sample!;
}

/** The original, compiled once for one program. */
export interface OriginalBuild { home: string; buildDir: string; fa: string }

/** `bin/luna --compile-only --build-dir=B prog.fa` in the program's directory (its ucodes.cpp beside it). */
export async function compileOriginal(home: string, fa: string, buildDir: string): Promise<OriginalBuild> {
  const env = originalCompileEnv(home);
  const r = await exec(join(home, 'bin', 'luna'), ['-q', '--compile-only', `--build-dir=${buildDir}`, basename(fa)], { cwd: dirname(fa), env, timeoutMs: 600_000 });
  if (r.code !== 0 || !existsSync(join(buildDir, 'libucodes.so'))) throw failure(`the original's bin/luna --compile-only ${fa}`, r, 600_000);
  return { home, buildDir, fa };
}

/** The original's runtime on a compiled program: `rts` directly, or 2 ranks under mpirun over TCP. */
export function runOriginal(b: OriginalBuild, p: Placement, args: (string | number)[], timeoutMs = 300_000): Promise<Sample> {
  const rts = [join(b.home, 'bin', 'rts'), `--worker-threads-count=${p.threads}`, join(b.buildDir, 'libucodes.so'), ...args.map(String)];
  const cmd = p.ranks === 1 ? rts : ['mpirun', '--allow-run-as-root', '-np', String(p.ranks), '--mca', 'btl', 'tcp,self', ...rts];
  const env = { ...process.env, LD_LIBRARY_PATH: `${join(b.home, 'lib')}${process.env.LD_LIBRARY_PATH ? `:${process.env.LD_LIBRARY_PATH}` : ''}` };
  return timed(`original ${basename(dirname(b.fa))} ${p.ranks}×${p.threads} ${args.join(' ')}`, cmd, { env, timeoutMs });
}

/** luna-ts on the same .fa and ucodes.cpp (nodes = ranks), optionally starting once its workers have booted. */
export function runLunaTs(fa: string, p: Placement, args: (string | number)[], o: { warmStart?: boolean; timeoutMs?: number } = {}): Promise<Sample> {
  const cmd = [process.execPath, ...LUNA_NODE_FLAGS, LUNA, 'run', '--quiet', ...(p.ranks > 1 ? ['--nodes', String(p.ranks)] : []), '--threads', String(p.threads),
    ...(o.warmStart ? ['--warm-start'] : []), '--ucodes', join(dirname(fa), 'ucodes.cpp'), fa, ...args.map(String)];
  const env = lunaTsEnv();
  return timed(`luna-ts ${basename(dirname(fa))} ${p.ranks}×${p.threads} ${args.join(' ')}`, cmd, { cwd: ROOT, env, timeoutMs: o.timeoutMs ?? 300_000 });
}
