// Shared helpers of the benchmark harness (bench/run.ts and its suites): paths, timing, medians,
// in-process and CLI runs of LuNA programs, result/target types and table formatting.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadProgram, type Loaded } from '../src/program/load.js';
import { runSingleNode } from '../src/runtime/run.js';
import { median } from './median.js';
import { parseKernelUs } from './original/spans.js';
import { followGroup } from './sched.js';
import type { SyntheticOptions } from '../src/analysis/sim/synthetic.js';

/** A setting the user gave the bench (an environment variable) is wrong: said as its message alone, no stack. */
export class BenchSettingError extends Error {}

/** Repository root (this file runs from dist/bench/). */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const LUNA = join(ROOT, 'bin', 'luna');
/**
 * The Node flags of `bin/luna`'s first line: runs start `node <flags> bin/luna …`, so that they
 * measure what a user's `bin/luna …` runs.
 */
const LUNA_FIRST_LINE = readFileSync(LUNA, 'utf8').split('\n', 1)[0]!;
export const LUNA_NODE_FLAGS: string[] = (LUNA_FIRST_LINE.match(/\snode\s+(.*)$/)?.[1] ?? '').split(/\s+/).filter((a) => a.startsWith('--'));
/**
 * The environment `bin/luna`'s first line sets (`env -S NAME=value… node`), `${NAME}` expanded
 * from this process's environment as env(1) does: runs are spawned with it.
 */
export const LUNA_NODE_ENV: Record<string, string> = Object.fromEntries(
  (LUNA_FIRST_LINE.match(/-S\s+(.*?)\s*\bnode\s/)?.[1] ?? '').split(/\s+/).filter((a) => /^\w+=/.test(a)).map((a) => {
    const eq = a.indexOf('=');
    return [a.slice(0, eq), a.slice(eq + 1).replace(/\$\{(\w+)\}/g, (_, v: string) => process.env[v] ?? '')];
  }),
);
/** A benchmark program under bench/programs/. */
export const prog = (rel: string): string => join(ROOT, 'bench', 'programs', rel);

export interface Ctx {
  quick: boolean;
  /** repetitions per measurement (median taken) */
  reps: number;
  /** results of the suites that already ran in this invocation (e.g. transport for cluster) */
  previous: Record<string, SuiteOutput>;
  log: (msg: string) => void;
}

export interface Target {
  /** figure key */
  key: string;
  op: '<=' | '>=';
  value: number;
  /** what the target is (from the issue) */
  label: string;
}

export interface SuiteOutput {
  status: 'ok' | 'missing' | 'error';
  figures: Record<string, number>;
  /** unit per figure key (optional) */
  units?: Record<string, string>;
  targets?: Target[];
  notes?: string[];
  error?: string;
  seconds?: number;
}

export { median };

export const nowMs = (): number => performance.now();

/** Round to 3 significant digits (for JSON and tables). */
export function sig(x: number, digits = 3): number {
  if (!Number.isFinite(x) || x === 0) return x;
  return Number(x.toPrecision(digits));
}

// ------------------------------------------------------------------ in-process runs

const loadedCache = new Map<string, Loaded>();

/** Load (bundle, check, compile) a benchmark program once. */
export async function load(file: string): Promise<Loaded> {
  let l = loadedCache.get(file);
  if (!l) {
    l = await loadProgram(file, { cacheDir: join(ROOT, '.luna-cache') });
    if (!l.program) throw new Error(`cannot load ${file}:\n${l.text}`);
    loadedCache.set(file, l);
  }
  return l;
}

export interface InProcOptions {
  threads: number;
  traceDir?: string;
  traceOrigin?: string;
}

/**
 * Failures and hangs met during the run (each retried once): printed at the end and saved in the
 * JSON, so a flaky runtime shows up without losing the whole benchmark.
 */
export const incidents: string[] = [];

const ATTEMPTS = 3;

/** Up to ATTEMPTS tries, 2 s apart; every failure is an incident. */
export async function retry(what: string, fn: () => Promise<number>): Promise<number> {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (e) {
      const msg = (e as Error).message;
      incidents.push(`${what}: ${msg}${i < ATTEMPTS ? ' — retried' : ' — gave up'}`);
      if (i >= ATTEMPTS) throw new Error(`${what} failed ${ATTEMPTS} times: ${msg}`);
      await new Promise((r) => setTimeout(r, 2000));
    }
  }
}

/** In-process runs that take longer than this are reported as hangs. */
export const INPROC_TIMEOUT_MS = 60_000;

async function once(l: Loaded, args: (string | number)[], o: InProcOptions): Promise<number> {
  const t0 = nowMs();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, rej) => {
    timer = setTimeout(() => rej(new Error(`no end after ${INPROC_TIMEOUT_MS / 1000} s (hang not detected by the runtime)`)), INPROC_TIMEOUT_MS);
  });
  try {
    const res = await Promise.race([
      runSingleNode({
        program: l.program!, bundle: l.bundle?.file, args: args.map(String), threads: o.threads,
        traceDir: o.traceDir, traceOrigin: o.traceOrigin,
      }),
      timeout,
    ]);
    if (!res.ok) throw new Error(`${res.kind}: ${res.message}`);
    return nowMs() - t0;
  } finally {
    clearTimeout(timer);
  }
}

/** Run a loaded program with runSingleNode; returns wall milliseconds (load excluded). Retried. */
export async function runInProc(l: Loaded, args: (string | number)[], o: InProcOptions): Promise<number> {
  const what = `in-process ${relative(ROOT, l.file)} ${args.join(' ')} (threads ${o.threads}${o.traceDir ? ', traced' : ''})`;
  return retry(what, () => once(l, args, o));
}

// ------------------------------------------------------------------ CLI runs

function cliOnce(argv: (string | number)[], timeoutMs: number, env?: Record<string, string>): Promise<number> {
  return new Promise((res, rej) => {
    const t0 = nowMs();
    // own process group, so a timeout kills the launcher and the node processes it started
    const child = spawn(process.execPath, [...LUNA_NODE_FLAGS, LUNA, 'run', ...argv.map(String)], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], detached: true, env: { ...process.env, ...LUNA_NODE_ENV, ...env } });
    followGroup(child.pid);
    let out = '';
    child.stdout.on('data', (d: Buffer) => { if (out.length < 8192) out += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { if (out.length < 8192) out += d.toString(); });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try { process.kill(-child.pid!, 'SIGKILL'); } catch { child.kill('SIGKILL'); }
    }, timeoutMs);
    child.on('error', (e) => { clearTimeout(timer); rej(e); });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      const ms = nowMs() - t0;
      if (code === 0) res(ms);
      else rej(new Error(`exit ${code ?? signal}${timedOut ? ` (no end after ${timeoutMs / 1000} s, killed)` : ''}: ${out.trim().split('\n').slice(0, 6).join(' | ')}`));
    });
  });
}

/** Run `bin/luna run <argv…>` as a child process (`env` added to this one's); wall milliseconds from spawn to exit. Retried. */
export async function runCli(argv: (string | number)[], timeoutMs = 120_000, env?: Record<string, string>): Promise<number> {
  const what = `${env ? Object.entries(env).map(([k, v]) => `${k}=${v} `).join('') : ''}luna run ${argv.map((a) => (typeof a === 'string' && a.startsWith(ROOT) ? relative(ROOT, a) : a)).join(' ')}`;
  return retry(what, () => cliOnce(argv, timeoutMs, env));
}

/**
 * The order of round `r` of interleaved measurements: `items` rotated by r (a b c, b c a, c a b,
 * …), so each configuration takes every place in the round equally often. A fixed order lets one
 * configuration always pay what the previous one left behind (a trace's writeback, a warm or
 * a cold cache, a collection due).
 */
export function roundOrder<T>(items: readonly T[], r: number): T[] {
  const k = items.length === 0 ? 0 : r % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

/**
 * Measure several configurations interleaved (a, b, c, b, c, a, …; see roundOrder) `reps` times
 * and return the median per configuration, so slow phases of a noisy machine hit every
 * configuration alike.
 */
export async function interleaved<K extends string>(reps: number, runs: Record<K, () => Promise<number>>): Promise<Record<K, number>> {
  const keys = Object.keys(runs) as K[];
  const samples = Object.fromEntries(keys.map((k) => [k, [] as number[]])) as unknown as Record<K, number[]>;
  for (let r = 0; r < reps; r++) for (const k of roundOrder(keys, r)) samples[k].push(await runs[k]());
  return Object.fromEntries(keys.map((k) => [k, median(samples[k])])) as Record<K, number>;
}

/** Check a figure against a target. */
export function targetMet(t: Target, figures: Record<string, number>): boolean | undefined {
  const v = figures[t.key];
  if (v === undefined || !Number.isFinite(v)) return undefined;
  return t.op === '<=' ? v <= t.value : v >= t.value;
}

// ------------------------------------------------------------------ formatting

export function fmt(x: number | undefined): string {
  if (x === undefined) return '—';
  if (!Number.isFinite(x)) return String(x);
  const a = Math.abs(x);
  if (a >= 1e6) return x.toExponential(2);
  if (a >= 100 || Number.isInteger(x)) return String(Math.round(x));
  if (a >= 10) return x.toFixed(1);
  if (a >= 1) return x.toFixed(2);
  return x.toPrecision(2);
}

export function table(rows: string[][], header?: string[]): string {
  const all = header ? [header, ...rows] : rows;
  const w = all[0].map((_, c) => Math.max(...all.map((r) => (r[c] ?? '').length)));
  const line = (r: string[]) => r.map((s, c) => (c === 0 ? s.padEnd(w[c]) : s.padStart(w[c]))).join('  ').trimEnd();
  const out = all.map(line);
  if (header) out.splice(1, 0, w.map((n) => '-'.repeat(n)).join('  '));
  return out.join('\n');
}

/**
 * Run one section of a suite; a failure is recorded (note + incident) instead of losing the
 * figures of the other sections. Returns false when the section failed.
 */
export async function section(ctx: Ctx, notes: string[], name: string, fn: () => Promise<void>): Promise<boolean> {
  try {
    await fn();
    return true;
  } catch (e) {
    const msg = (e as Error).message ?? String(e);
    notes.push(`SECTION FAILED: ${name}: ${msg}`);
    incidents.push(`section ${name} failed: ${msg.split('\n')[0]}`);
    ctx.log(`section ${name} failed: ${msg.split('\n')[0]}`);
    return false;
  }
}

// ------------------------------------------------------------------ timed CLI runs

export interface Timed {
  /** whole process, spawn to exit */
  wallMs: number;
  /** the program itself: from its start (after loading) to its end, on node 0 (`luna run --timing`) */
  programMs: number;
  /** CPU time of node 0's system thread over the program */
  systemCpuMs: number;
  /** of which in ucodes it ran itself (wall time) */
  inlineUcodeMs: number;
  /** peak resident memory of node 0's process, KiB */
  maxRssKB: number;
  inline: number;
  sent: number;
  /** the kernel's mean thread CPU µs a call, where the program's ucodes print it (`luna-kernel` lines: bench/taskbench/kernel.ts sampledKernel) */
  kernelUs?: number;
}

function timedOnce(argv: (string | number)[], timeoutMs: number, env?: Record<string, string>): Promise<Timed> {
  return new Promise((res, rej) => {
    const t0 = nowMs();
    const child = spawn(process.execPath, [...LUNA_NODE_FLAGS, LUNA, 'run', '--timing', ...argv.map(String)], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], detached: true, env: { ...process.env, ...LUNA_NODE_ENV, ...env } });
    followGroup(child.pid);
    let out = '';
    const keep = (d: Buffer) => { if (out.length < 65536) out += d.toString(); };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => { try { process.kill(-child.pid!, 'SIGKILL'); } catch { child.kill('SIGKILL'); } }, timeoutMs);
    child.on('error', (e) => { clearTimeout(timer); rej(e); });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      const wallMs = nowMs() - t0;
      const m = /luna: timing: (\{.*\})/.exec(out);
      if (code !== 0 || !m) { rej(new Error(`exit ${code ?? signal}: ${out.trim().split('\n').slice(0, 6).join(' | ')}`)); return; }
      const j = JSON.parse(m[1]!) as Omit<Timed, 'wallMs'>;
      const kernelUs = parseKernelUs(out);
      res({ wallMs, programMs: j.programMs, systemCpuMs: j.systemCpuMs, inlineUcodeMs: j.inlineUcodeMs, maxRssKB: j.maxRssKB, inline: j.inline, sent: j.sent, ...(kernelUs !== undefined ? { kernelUs } : {}) });
    });
  });
}

/**
 * The figure a floor tool prints first (bench/raw-pingpong.ts, bench/raw-exchange.ts: two bare
 * Node processes doing what a runtime step does), run in a fresh process.
 */
export function floorFigure(script: string, args: (string | number)[]): number {
  const r = spawnSync(process.execPath, [join(ROOT, 'dist', 'bench', `${script}.js`), ...args.map(String)], { encoding: 'utf8', timeout: 120_000 });
  const x = Number.parseFloat(r.stdout);
  if (r.status !== 0 || !Number.isFinite(x)) throw new Error(`${script}: ${r.stderr || r.error?.message || 'no figure'}`);
  return x;
}

/** `luna run --timing <argv…>` in a fresh process (with `env` added to ours); retried like runCli. */
export async function runTimed(argv: (string | number)[], timeoutMs = 120_000, env?: Record<string, string>): Promise<Timed> {
  const what = `${env ? Object.entries(env).map(([k, v]) => `${k}=${v} `).join('') : ''}luna run --timing ${argv.map((a) => (typeof a === 'string' && a.startsWith(ROOT) ? relative(ROOT, a) : a)).join(' ')}`;
  let last: Timed | undefined;
  await retry(what, async () => { last = await timedOnce(argv, timeoutMs, env); return last.programMs; });
  return last!;
}

/**
 * Several configurations interleaved `reps` times, each a fresh `luna run --timing` (`before`
 * each, if given); per configuration the run with the median program time.
 */
export async function interleavedTimed<K extends string>(reps: number, runs: Record<K, (string | number)[]>, baseline?: () => void | Promise<void>, before?: () => Promise<void>): Promise<Record<K, Timed>> {
  const keys = Object.keys(runs) as K[];
  const samples = Object.fromEntries(keys.map((k) => [k, [] as Timed[]])) as unknown as Record<K, Timed[]>;
  // a baseline measured by the caller takes its turn in every round, at a place that rotates too
  const turns: (K | null)[] = baseline ? [null, ...keys] : keys;
  for (let r = 0; r < reps; r++) {
    for (const k of roundOrder(turns, r)) {
      if (k === null) await baseline!();
      else { await before?.(); samples[k].push(await runTimed(runs[k])); }
    }
  }
  return Object.fromEntries(keys.map((k) => {
    const s = [...samples[k]].sort((a, b) => a.programMs - b.programMs);
    return [k, s[s.length >> 1]!];
  })) as Record<K, Timed>;
}

/**
 * Write a generated trace (src/analysis/sim/synthetic.ts) to `dir` from a child process: at
 * 10^6-fragment sizes the generator leaves this process's heap at ~3 GiB, which made every pass
 * measured after it 2–3× slower.
 */
export function writeSyntheticTrace(dir: string, o: SyntheticOptions): void {
  const lib = (m: string): string => JSON.stringify(new URL(`../src/analysis/sim/${m}.js`, import.meta.url).href);
  execFileSync(process.execPath, ['--input-type=module', '-e', `import { syntheticEvents, syntheticManifest } from ${lib('synthetic')}; import { writeSimTrace } from ${lib('write')};
    const o = ${JSON.stringify(o)}; writeSimTrace(${JSON.stringify(dir)}, syntheticManifest(o), syntheticEvents(o));`], { stdio: 'inherit' });
}

/**
 * A generated trace kept under the temporary directory between runs, keyed by its options and by
 * the code that generates and writes it (a changed generator, writer or schema makes a new one):
 * at 10^6 fragments generating takes about a minute, longer than the exports measured on it.
 * Written to a sibling directory first, so that an interrupted generation is never reused.
 */
export function cachedSyntheticTrace(o: SyntheticOptions): string {
  const h = createHash('sha256').update(JSON.stringify(o));
  for (const m of ['analysis/sim/synthetic', 'analysis/sim/prng', 'analysis/sim/write', 'trace/writer', 'trace/schema', 'trace/format', 'trace/dir']) {
    h.update(readFileSync(new URL(`../src/${m}.js`, import.meta.url)));
  }
  const dir = join(tmpdir(), `luna-bench-trace-${o.events}-${o.nodes}n${o.threads}t-${h.digest('hex').slice(0, 12)}`);
  if (existsSync(join(dir, 'manifest.json'))) return dir;
  const part = `${dir}.part${process.pid}`;
  rmSync(part, { recursive: true, force: true });
  writeSyntheticTrace(part, o);
  rmSync(dir, { recursive: true, force: true });
  renameSync(part, dir);
  return dir;
}
