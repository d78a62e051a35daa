// The tiering probe: what any JavaScript fragment runtime pays on this machine before V8's
// optimised code arrives. A minimal, honest runtime in plain JS, with nothing of luna's
// (no tracing, no policy, no workers, no C++): DF values in a Map keyed by strings spelled as
// luna spells them (`x#1.<i>`, `v#1.<t>.<i>`), freed after their counted reads (req_count);
// CF objects with an input counter, parked on the keys they miss; a FIFO ready queue; a loop
// unrolled a slice at a time by a loop fragment that requeues itself; one closure per code. It
// runs the side-by-side's two short programs from cold, each run in a fresh process with
// bin/luna's V8 flags:
//   chain    1×n links, x[i+1] = x[i] + 1 (bench/programs/chain), 20 000 and 200 000 links;
//   stencil  stencil_1d of width 2 (Task Bench), both columns of step t reading both of t − 1,
//            an empty kernel, 2 000 and 20 000 steps.
// The span is timed as the side-by-side times luna's: from the first code's call to the last
// one's. The steady cost a fragment is (long − short) ÷ (their fragments' difference) and the
// fixed cost the short span less its fragments at that rate (bench/original.ts, fixedAndSteady):
// V8's tiering that every JS design pays in a short program, the floor luna-ts's own fixed cost
// is compared with. Also the time at fragment 1 / 100 / 1 000 / 3 000 / 10 000 of the short runs, so the
// fixed cost splits by window the way luna's does (docs/benchmarks.md, "The tiering probe").
//   node dist/bench/raw-tiering.js [reps]             prints one JSON object (ms, µs)
//   node dist/bench/raw-tiering.js run chain|stencil N  one cold run (the child)
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { median } from './median.js';

const SELF = fileURLToPath(import.meta.url);
/** the fragments at which a short run's clock is read: the work before the first, and the fixed cost by window */
export const WINDOWS = [1, 100, 1000, 3000, 10000] as const;
/** loop iterations a loop fragment unrolls at a time: few, so that a short run starts at once (luna adapts its chunk; 256 here put 5–17 ms of unrolling before the stencil's first task) */
const SLICE = 16;

export interface TieringRow {
  /** fragments of the short and the long program */
  short: number; long: number;
  /** median spans (ms) of the short and the long program */
  shortMs: number; longMs: number;
  /** steady µs a fragment, (long − short) ÷ (long − short fragments) */
  steadyUs: number;
  /** the short span less its fragments at the steady rate (ms) */
  fixedMs: number;
  /** the short run's median ms from its first fragment to fragment w, less w at the steady rate, for w of WINDOWS */
  fixedByWindow: Record<string, number>;
  /** the same split of the thread's CPU in the span (ms, µs): what the thread itself ran */
  fixedCpuMs: number; steadyCpuUs: number;
  /** the short runs' median ms runnable but off the CPU in the span (preempted: the load, V8's compiler threads) */
  shortWaitMs: number;
  /** every short run's span (ms), the spread of the cold runs */
  shortRuns: number[];
}
export interface TieringProbe { chain: TieringRow; stencil: TieringRow; reps: number; flags: string[] }

// ---- the runtime (child) ----

/** A CF: its code, its inputs' keys and values, the count still missing, its output's key and the reads it owes. */
class Cf {
  code: (cf: Cf) => void;
  keys: string[];
  vals: number[];
  missing: number;
  out: string;
  reads: number;
  i: number;
  t: number;
  constructor(code: (cf: Cf) => void, keys: string[], out: string, reads: number, i: number, t: number) {
    this.code = code; this.keys = keys; this.vals = new Array<number>(keys.length); this.missing = 0;
    this.out = out; this.reads = reads; this.i = i; this.t = t;
  }
}
/** A DF value and the reads it still owes before it is freed. */
class Entry { v: number; left: number; constructor(v: number, left: number) { this.v = v; this.left = left; } }

class Rt {
  readonly store = new Map<string, Entry>();
  readonly parked = new Map<string, Cf[]>();
  readonly ready: (Cf | Loop)[] = [];
  head = 0;
  /** CFs submitted and not yet run, and a loop that stopped unrolling for them */
  pending = 0;
  held: Loop | null = null;
  /** the examination: each input found or parked on; ready when none is missing */
  submit(cf: Cf): void {
    this.pending++;
    const keys = cf.keys;
    for (let k = 0; k < keys.length; k++) {
      const e = this.store.get(keys[k]);
      if (e !== undefined) { cf.vals[k] = e.v; this.consume(keys[k], e); } else {
        cf.missing++;
        const p = this.parked.get(keys[k]);
        if (p === undefined) this.parked.set(keys[k], [cf]); else p.push(cf);
      }
    }
    if (cf.missing === 0) this.ready.push(cf);
  }
  consume(key: string, e: Entry): void { if (--e.left === 0) this.store.delete(key); }
  /** a CF's output: the parked readers take it, the rest of its reads wait in the store */
  post(key: string, v: number, reads: number): void {
    const p = this.parked.get(key);
    if (p !== undefined) {
      this.parked.delete(key);
      for (let j = 0; j < p.length; j++) {
        const cf = p[j];
        cf.vals[cf.keys.indexOf(key)] = v;
        reads--;
        if (--cf.missing === 0) this.ready.push(cf);
      }
    }
    if (reads > 0) this.store.set(key, new Entry(v, reads));
  }
  pump(): void {
    const q = this.ready;
    while (this.head < q.length) {
      const f = q[this.head++];
      if (this.head > 4096) { q.splice(0, this.head); this.head = 0; }
      if (f instanceof Loop) { f.unroll(this); continue; }
      f.code(f);
      // a loop unrolls again once most of what it made has run: memory bounded, no up-front work
      if (--this.pending < SLICE / 2 && this.held !== null) { q.push(this.held); this.held = null; }
    }
  }
}

/** A loop fragment: unrolls SLICE iterations, then waits until most of them have run. */
class Loop {
  next: number;
  constructor(readonly from: number, readonly to: number, readonly body: (rt: Rt, i: number) => void) { this.next = from; }
  unroll(rt: Rt): void {
    const end = Math.min(this.to, this.next + SLICE);
    for (; this.next < end; this.next++) this.body(rt, this.next);
    if (this.next < this.to) rt.held = this;
  }
}

/** ms on a CPU and ms runnable but waiting for one, of this thread so far (Linux's schedstat; NaN elsewhere) */
function sched(): [number, number] {
  try {
    const [run, wait] = readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ').map(Number);
    return [run / 1e6, wait / 1e6];
  } catch { return [NaN, NaN]; }
}

/** A run: its span (ms), the ms from its first fragment to fragment w of WINDOWS, the thread's CPU and runnable wait in the span (ms). */
interface Run { spanMs: number; marks: number[]; cpuMs: number; waitMs: number }

function runChild(kind: string, n: number): Run {
  const rt = new Rt();
  let begin = 0, end = 0, done = 0, s0: [number, number] = [0, 0], s1: [number, number] = [0, 0];
  const marks: number[] = [];
  let at: number = WINDOWS[0];
  const tick = (): void => {
    if (++done !== at) return;
    marks.push(performance.now() - begin);
    at = marks.length < WINDOWS.length ? WINDOWS[marks.length] : -1;
  };
  const x = (i: number): string => `x#1.${i}`;
  const v = (t: number, i: number): string => `v#1.${t}.${i}`;
  if (kind === 'chain') {
    const start = (cf: Cf): void => { s0 = sched(); begin = performance.now(); rt.post(cf.out, 0, cf.reads); };
    const step = (cf: Cf): void => { tick(); rt.post(cf.out, cf.vals[0] + 1, cf.reads); };
    const check = (cf: Cf): void => { end = performance.now(); s1 = sched(); if (cf.vals[0] !== n) throw new Error(`chain: x[n] is ${cf.vals[0]}, not ${n}`); };
    rt.submit(new Cf(start, [], x(0), 1, 0, 0));
    rt.ready.push(new Loop(0, n, (r, i) => r.submit(new Cf(step, [x(i)], x(i + 1), 1, i, 0))));
    rt.submit(new Cf(check, [x(n)], '', 0, n, 0));
  } else {
    const steps = n;
    const task0 = (cf: Cf): void => { if (begin === 0) { s0 = sched(); begin = performance.now(); } rt.post(cf.out, 1, cf.reads); };
    const task2 = (cf: Cf): void => { tick(); rt.post(cf.out, (cf.vals[0] + cf.vals[1]) * 0.5 + cf.i, cf.reads); };
    const check = (cf: Cf): void => { end = performance.now(); s1 = sched(); if (!Number.isFinite(cf.vals[0])) throw new Error('stencil: bad result'); };
    for (let i = 0; i < 2; i++) rt.submit(new Cf(task0, [], v(0, i), 2, i, 0));
    rt.ready.push(new Loop(1, steps, (r, t) => {
      const reads = t === steps - 1 ? 1 : 2;
      for (let i = 0; i < 2; i++) r.submit(new Cf(task2, [v(t - 1, 0), v(t - 1, 1)], v(t, i), reads, i, t));
    }));
    for (let i = 0; i < 2; i++) rt.submit(new Cf(check, [v(steps - 1, i)], '', 0, i, steps));
  }
  rt.pump();
  if (end === 0) throw new Error(`${kind} ${n}: the last fragment never ran (${rt.parked.size} keys parked)`);
  return { spanMs: end - begin, marks, cpuMs: s1[0] - s0[0], waitMs: s1[1] - s0[1] };
}

// ---- the probe (parent) ----

/** bin/luna's V8 flags for a fresh process: its first line's, and its interrupt budget on V8 11 (Node 20). */
export function lunaV8Flags(): string[] {
  const f = ['--max-semi-space-size=2', '--max-inlined-bytecode-size-cumulative=230'];
  if (process.versions.v8.startsWith('11.')) f.push('--interrupt-budget=32768');
  return f;
}

function cold(kind: string, n: number, flags: string[]): Run {
  const r = spawnSync(process.execPath, [...flags, SELF, 'run', kind, String(n)], { encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) throw new Error(`raw-tiering ${kind} ${n}: exit ${r.status ?? r.signal}: ${(r.stderr || '').trim().split('\n').slice(-1)[0] ?? ''}`);
  return JSON.parse(r.stdout) as Run;
}

function row(kind: string, short: number, long: number, perStep: number, reps: number, flags: string[]): TieringRow {
  const s: Run[] = [], l: Run[] = [];
  for (let k = 0; k < reps; k++) { s.push(cold(kind, short, flags)); l.push(cold(kind, long, flags)); }
  const shortMs = median(s.map((r) => r.spanMs)), longMs = median(l.map((r) => r.spanMs));
  const ns = short * perStep, nl = long * perStep;
  const steadyUs = ((longMs - shortMs) * 1000) / (nl - ns);
  const shortCpu = median(s.map((r) => r.cpuMs)), steadyCpuUs = ((median(l.map((r) => r.cpuMs)) - shortCpu) * 1000) / (nl - ns);
  const fixedByWindow: Record<string, number> = {};
  for (let w = 0; w < WINDOWS.length && WINDOWS[w] <= ns; w++) fixedByWindow[WINDOWS[w]] = median(s.map((r) => r.marks[w])) - (WINDOWS[w] * steadyUs) / 1000;
  return {
    short: ns, long: nl, shortMs, longMs, steadyUs, fixedMs: shortMs - (ns * steadyUs) / 1000, fixedByWindow,
    fixedCpuMs: shortCpu - (ns * steadyCpuUs) / 1000, steadyCpuUs, shortWaitMs: median(s.map((r) => r.waitMs)), shortRuns: s.map((r) => r.spanMs),
  };
}

/** Both programs, short and long alternated, `reps` cold runs each. */
export function probeTiering(reps = 7, flags = lunaV8Flags()): TieringProbe {
  return { chain: row('chain', 20_000, 200_000, 1, reps, flags), stencil: row('stencil', 2_000, 20_000, 2, reps, flags), reps, flags };
}

/** One line for a results table: the probe as a machine fact. */
export function tieringLine(p: TieringProbe): string {
  const f = (r: TieringRow, what: string): string =>
    `${what} ${r.short} fragments ${r.shortMs.toFixed(1)} ms = ${r.fixedMs.toFixed(1)} ms fixed + ${r.steadyUs.toFixed(2)} µs steady a fragment ` +
    `(its thread's CPU: ${r.fixedCpuMs.toFixed(1)} ms fixed)`;
  return `cold-start floor of a minimal JS fragment runtime (bench/raw-tiering.ts, medians of ${p.reps} fresh processes): ` +
    `${f(p.chain, 'chain')}; ${f(p.stencil, 'stencil_1d')}`;
}

if (process.argv[1] === SELF) {
  if (process.argv[2] === 'run') {
    const [kind, n] = [process.argv[3], Number(process.argv[4])];
    if ((kind !== 'chain' && kind !== 'stencil') || !(Number.isInteger(n) && n >= 2)) {
      process.stderr.write(`raw-tiering: run chain|stencil N (N ≥ 2), got ${process.argv.slice(3).join(' ')}\n`);
      process.exit(2);
    }
    console.log(JSON.stringify(runChild(kind, n)));
  }
  else console.log(JSON.stringify(probeTiering(Number(process.argv[2] ?? 7))));
}
