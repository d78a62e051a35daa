// Why two worker lanes may run chains no faster than one: 1 chain and 2 independent chains of
// `n` links, each link a C++ kernel spinning `us` µs (70 by default, the METG's size on this
// machine), on 1 lane and on 2 (`luna run --warm-start --timing`). Per configuration:
//   - µs per link (program time / links: meaningful on a quiet machine only);
//   - the system thread's CPU per link, batches per link, workers it woke per link, times a lane
//     slept for want of its next batch per link (counts and CPU, which a loaded machine moves much
//     less than wall times);
// and from one traced run of each: the lanes' busy share of the program's span, how often a lane
// waited between two links (a gap of over 20 µs: its next link was not there yet), the system
// thread's busy spans per link, and how much of the second chain ran while the first still ran
// (1: side by side, 0: one after the other).
//
//   node dist/bench/run.js lanes [--reps N] [--quick] [--no-save]
//   LANES_LINKS=2000 LANES_US=70 (the defaults)
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readThreadFile } from '../src/trace/reader.js';
import { fmt, LUNA, LUNA_NODE_ENV, LUNA_NODE_FLAGS, median, retry, ROOT, section, sig, table, type Ctx, type SuiteOutput } from './common.js';
import { CXXFLAGS } from './original/runner.js';

/** c chains of n links, every link read once; link i of chain j spins `us` µs. */
export const CHAINS_FA = `import c_start(name \`x) as start;
import c_step(value \`prev, int \`us, name \`next) as step;
import c_check(int \`n, value \`last) as check;

sub chain(int n, int us, name x)
{
    cf first: start(x[0]) @ { req_count x[0] = 1; };
    for i = 0..n-1
        cf link[i]: step(x[i], us, x[i + 1]) @ { req_count x[i + 1] = 1; };
    check(n, x[n]);
}

sub main(int c, int n, int us)
{
    df x;
    for j = 0..c-1
        chain(n, us, x[j]);
}
`;

/** The link spins on the monotonic clock, as the METG harness's C++ kernels take their time. */
const CHAINS_CPP = `#include "ucenv.h"
#include <chrono>
using namespace luna::ucenv;
extern "C" {
void c_start(OutputDF &x) { x = 0; }
void c_step(const InputDF &prev, int us, OutputDF &next) {
  const auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - t0 < std::chrono::microseconds(us)) {}
  next = prev.get_int() + 1;
}
void c_check(int n, const InputDF &last) { if (last.get_int() != n) ABORT("chains: x[n] is not n"); }
}
`;

/** What `luna run --timing` prints (the fields used here). */
interface Timing { programMs: number; systemCpuMs: number; batches: number; sent: number; systemWakes: number; workerWakes: number; laneSleeps?: number }

function runOnce(fa: string, threads: number, args: number[], trace?: string): Promise<Timing> {
  return new Promise((res, rej) => {
    const argv = [...LUNA_NODE_FLAGS, LUNA, 'run', '--timing', '--quiet', '--warm-start', '--threads', String(threads), ...(trace ? ['--trace', trace] : []), '--ucodes', join(fa, '..', 'ucodes.cpp'), fa, ...args.map(String)];
    const child = spawn(process.execPath, argv, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...LUNA_NODE_ENV, LUNA_CXXFLAGS: CXXFLAGS } });
    let out = '';
    const keep = (d: Buffer): void => { if (out.length < 1 << 20) out += d.toString(); };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', rej);
    child.on('close', (code) => {
      const m = /luna: timing: (\{.*\})/.exec(out);
      if (code !== 0 || !m) { rej(new Error(`luna run --threads ${threads} ${args.join(' ')}: exit ${code}: ${out.trim().split('\n').slice(-4).join(' | ')}`)); return; }
      res(JSON.parse(m[1]!) as Timing);
    });
  });
}

/** What one traced run shows about its lanes. */
export interface LaneTrace {
  /** per lane: the time it ran links over the program's span (first link start to last link end) */
  busy: number[];
  /** gaps of over 20 µs between consecutive links of a lane: the lane waited for its next link */
  waits: number;
  /** the system thread's busy spans (pump turns, results) */
  sysSpans: number;
  links: number;
  /** the share of the later chain's links that started before the earlier chain's last one ended */
  overlap: number;
  /**
   * The longest a chain with links still to start stood still, in links the other chain started
   * meanwhile, as a share of all links: whether the chains took turns at all, whatever CPU share
   * each lane got (a lane preempted more runs its chain slower and lowers `overlap`, not this).
   */
  stall: number;
}

const WAIT_NS = 20_000;

/** Read a traced run of one node: lanes' busy share, their waits, the system thread's turns, the chains' overlap. */
export function readLanes(dir: string): LaneTrace {
  const chainOf = new Map<number, string>();
  let sysSpans = 0;
  for (const e of readThreadFile(join(dir, 'node0.thread0.lt')).events) {
    if (e.kind === 'cfCreated') chainOf.set(e.cf, e.gid);
    else if (e.kind === 'sysBusy') sysSpans++;
  }
  // a lane's links, from every thread's file: the system thread records those it runs as a lane
  // of its own and those it runs inline on behalf of an idle lane, on that lane
  const byLane = new Map<number, Link[]>();
  const open = new Map<number, Link>();
  for (const f of readdirSync(dir).filter((n) => /^node0\.thread\d+\.lt$/.test(n))) {
    for (const e of readThreadFile(join(dir, f)).events) {
      if (e.kind === 'cfStart') {
        // the link's gid is <main>_<chain j>_…: the chain is its second component
        const l: Link = { t: e.t, end: Infinity, chain: (chainOf.get(e.cf) ?? '').split('_')[1] ?? '' };
        open.set(e.cf, l);
        const a = byLane.get(e.lane) ?? [];
        a.push(l);
        byLane.set(e.lane, a);
      } else if (e.kind === 'cfFinish') {
        const l = open.get(e.cf);
        if (l) { l.end = e.t; open.delete(e.cf); }
      }
    }
  }
  const starts: Link[] = [];
  const spans: { from: number; to: number; run: number }[] = [];
  let waits = 0;
  for (const links of byLane.values()) {
    links.sort((x, y) => x.t - y.t);
    let run = 0, prevFin = -1;
    for (const l of links) {
      if (prevFin >= 0 && l.t - prevFin > WAIT_NS) waits++;
      if (l.end !== Infinity) { run += l.end - l.t; prevFin = l.end; }
      starts.push(l);
    }
    spans.push({ from: links[0]!.t, to: prevFin, run });
  }
  starts.sort((x, y) => x.t - y.t);
  const from = Math.min(...spans.map((s) => s.from)), to = Math.max(...spans.map((s) => s.to));
  const byChain = new Map<string, number[]>();
  for (const s of starts) { const a = byChain.get(s.chain) ?? []; a.push(s.t); byChain.set(s.chain, a); }
  let overlap = 1;
  if (byChain.size === 2) {
    const [a, b] = [...byChain.values()].sort((x, y) => Math.min(...x) - Math.min(...y));
    const endA = Math.max(...a!);
    overlap = b!.filter((t) => t <= endA).length / b!.length;
  }
  return { busy: spans.map((s) => s.run / Math.max(1, to - from)), waits, sysSpans, links: starts.length, overlap, stall: stallOf(starts) };
}

/** A link as a lane ran it: start and finish (ns), and its chain. */
interface Link { t: number; end: number; chain: string }

/**
 * See LaneTrace.stall. A chain stands still from one link's finish to its next link's start
 * (and from the first link of all to its own first): the links the other chains started in
 * such a gap count. A link preempted on its lane does not count: its chain is not waiting for
 * the runtime then.
 */
function stallOf(links: readonly Link[]): number {
  const byChain = new Map<string, Link[]>();
  for (const l of links) { const a = byChain.get(l.chain) ?? []; a.push(l); byChain.set(l.chain, a); }
  if (byChain.size < 2) return 0;
  const starts = links.map((l) => l.t).sort((x, y) => x - y);
  const startsBefore = (t: number): number => {
    let lo = 0, hi = starts.length;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (starts[mid]! < t) lo = mid + 1; else hi = mid; }
    return lo;
  };
  let longest = 0;
  for (const own of byChain.values()) {
    own.sort((x, y) => x.t - y.t);
    let idleFrom = starts[0]!;
    for (const l of own) {
      // starts in [idleFrom, l.t), all of other chains (this chain's own next start is l.t)
      if (l.t > idleFrom) longest = Math.max(longest, startsBefore(l.t) - startsBefore(idleFrom));
      idleFrom = Math.max(idleFrom, l.end);
    }
  }
  return longest / links.length;
}

export async function run(ctx: Ctx): Promise<SuiteOutput> {
  const reps = ctx.quick ? 1 : ctx.reps;
  const n = Number(process.env.LANES_LINKS ?? (ctx.quick ? 500 : 2000));
  const us = Number(process.env.LANES_US ?? 70);
  const f: Record<string, number> = {};
  const units: Record<string, string> = {};
  const notes: string[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'luna-lanes-'));
  try {
    const sub = join(dir, 'chains');
    mkdirSync(sub);
    const fa = join(sub, 'chains.fa');
    writeFileSync(fa, CHAINS_FA);
    writeFileSync(join(sub, 'ucodes.cpp'), CHAINS_CPP);
    const configs = [1, 2].flatMap((c) => [1, 2].map((t) => ({ c, t, key: `c${c}x${t}` })));
    const timed = (c: number, t: number, trace?: string): Promise<Timing> => {
      let r: Timing | undefined;
      return retry(`lanes ${c} chains × ${t} lanes`, async () => { r = await runOnce(fa, t, [c, n, us], trace); return r.programMs; }).then(() => r!);
    };
    await timed(1, 1); // the C++ ucodes compiled once, outside the measured runs

    await section(ctx, notes, 'counts and times', async () => {
      const runs: Record<string, Timing[]> = {};
      for (let r = 0; r < reps; r++) {
        const k = r % configs.length;
        for (const c of [...configs.slice(k), ...configs.slice(0, k)]) (runs[c.key] ??= []).push(await timed(c.c, c.t));
      }
      const rows: string[][] = [];
      for (const c of configs) {
        const links = c.c * n;
        const med = (g: (x: Timing) => number): number => median(runs[c.key]!.map(g));
        const put = (k: string, v: number, unit?: string): void => { f[`${c.key}.${k}`] = sig(v); if (unit) units[`${c.key}.${k}`] = unit; };
        put('usPerLink', (med((x) => x.programMs) * 1000) / links, 'µs');
        put('sysCpuUsPerLink', (med((x) => x.systemCpuMs) * 1000) / links, 'µs');
        put('batchesPerLink', med((x) => x.batches) / links);
        put('wakesPerLink', med((x) => x.systemWakes + x.workerWakes) / links);
        put('laneSleepsPerLink', med((x) => x.laneSleeps ?? NaN) / links);
        rows.push([`${c.c} chain${c.c > 1 ? 's' : ''} × ${c.t} lane${c.t > 1 ? 's' : ''}`, fmt(f[`${c.key}.usPerLink`]), fmt(f[`${c.key}.sysCpuUsPerLink`]), fmt(f[`${c.key}.batchesPerLink`]), fmt(f[`${c.key}.wakesPerLink`]), fmt(f[`${c.key}.laneSleepsPerLink`])]);
      }
      // two independent chains: two lanes should take half the time of one
      f['twoChains.speedup'] = sig(f['c2x1.usPerLink']! / f['c2x2.usPerLink']!);
      notes.push(`${n} links of ${us} µs per chain, C++ kernels, --warm-start, medians of ${reps} alternated runs (µs per link: quiet machine only; the counts and CPU hold under load)`);
      notes.push(table(rows, ['configuration', 'µs / link', 'system CPU µs / link', 'batches / link', 'workers woken / link', 'lane slept for its next batch / link']));
      notes.push(`2 independent chains, 2 lanes against 1: ${fmt(f['twoChains.speedup'])}× (ideal 2)`);
    });

    await section(ctx, notes, 'traced', async () => {
      const rows: string[][] = [];
      for (const c of configs.filter((x) => x.t === 2)) {
        const tdir = join(dir, `trace-${c.key}`);
        await timed(c.c, c.t, tdir);
        const l = readLanes(tdir);
        // one chain runs on one lane at a time: its busiest lane; two chains: the less busy lane
        f[`${c.key}.laneBusy`] = sig(c.c === 1 ? Math.max(...l.busy) : Math.min(...l.busy));
        f[`${c.key}.laneWaitsPerLink`] = sig(l.waits / l.links);
        f[`${c.key}.sysSpansPerLink`] = sig(l.sysSpans / l.links);
        if (c.c === 2) { f[`${c.key}.overlap`] = sig(l.overlap); f[`${c.key}.stall`] = sig(l.stall); }
        rows.push([c.key, l.busy.map((b) => fmt(sig(b))).join(' / '), fmt(f[`${c.key}.laneWaitsPerLink`]), fmt(f[`${c.key}.sysSpansPerLink`]), c.c === 2 ? fmt(f[`${c.key}.overlap`]) : '', c.c === 2 ? fmt(f[`${c.key}.stall`]) : '']);
        rmSync(tdir, { recursive: true, force: true });
      }
      notes.push('one traced run each (tracing adds its own cost): lanes busy share of the span (figure laneBusy: 1 chain its busiest lane, 2 chains the less busy one), lane waits (gap > 20 µs) and system-thread busy spans per link, the chains\' overlap (share of the later chain started before the earlier ended: lowered by a lane preempted more) and stall (the most links one chain started while the other, unfinished, started none, as a share of all links: the chains taking turns)');
      notes.push(table(rows, ['configuration', 'lanes busy', 'lane waits / link', 'system spans / link', 'overlap', 'stall']));
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return {
    status: 'ok', figures: f, units, notes,
    targets: [{ key: 'c2x2.laneBusy', op: '>=', value: 0.95, label: 'each lane busy ≥ 95 % with its own chain (traced)' }],
  };
}
