// Cluster suite (issue 3, item 7), with real node processes: `bin/luna run --nodes N --threads 1`
// timed from spawn to exit; the fixed cost (process start, connection, load) is the median run
// time at a tiny size in the same run and is subtracted where a per-CF or per-hop figure is given.
//  - CF throughput, 2 nodes × 1 thread: N empty independent CFs, default placement (all on node 0)
//    and `locator_cyclic: i` (every other CF migrates to node 1); 1 node × 1 thread as reference;
//  - seed 004 (matrix +1 by blocks, examples/seed004) on 2 nodes: all CFs on node 0 vs
//    `locator_cyclic` vs `stealable` add_one CFs — net wall times and ratios;
//  - efficiency of 2 nodes × 1 thread vs 1 × 1 on ~1 ms CFs (independent_cyclic.fa, us = 1000);
//  - DF transfer: a DF forwarded along a chain of hops alternating between the 2 nodes
//    (pingpong.fa): per-hop time for 8 B (latency), 1 MiB and 64 MiB (bandwidth = size / per-hop
//    time, from two hop counts so the DF creation and the startup cancel out), against the raw
//    node:net figures of the transport suite when it ran.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { interleaved, ROOT, runCli, sig, type Ctx, type SuiteOutput, type Target } from './common.js';
import { prog } from './common.js';

const MiB = 1 << 20;

function seedProgram(variant: string): string {
  const ex = join(ROOT, 'examples', 'seed004', `${variant}.fa`);
  return existsSync(ex) ? ex : prog(`seed004/${variant}.fa`);
}

/** First figure of another suite whose key matches all patterns. */
function findFigure(figs: Record<string, number> | undefined, ...pats: RegExp[]): [string, number] | undefined {
  if (!figs) return undefined;
  for (const [k, v] of Object.entries(figs)) if (pats.every((p) => p.test(k)) && Number.isFinite(v)) return [k, v];
  return undefined;
}

export async function run(ctx: Ctx): Promise<SuiteOutput> {
  const q = ctx.quick;
  const reps = ctx.reps;
  const f: Record<string, number> = {};
  const units: Record<string, string> = {};
  const targets: Target[] = [];
  const notes: string[] = [];
  const n = q ? 50_000 : 200_000;
  const ind = prog('independent/independent.fa');
  const cyc = prog('independent/independent_cyclic.fa');
  const pp = prog('pingpong/pingpong.fa');
  const N2 = ['--nodes', 2, '--threads', 1];
  const N1 = ['--nodes', 1, '--threads', 1];

  // ---- CF throughput
  ctx.log(`cluster: CF throughput, N = ${n}`);
  const tp = await interleaved(reps, {
    tiny1: () => runCli([...N1, ind, 1, 0]),
    big1: () => runCli([...N1, ind, n, 0]),
    tiny2: () => runCli([...N2, ind, 1, 0]),
    big2: () => runCli([...N2, ind, n, 0]),
    tiny2c: () => runCli([...N2, cyc, 1, 0]),
    big2c: () => runCli([...N2, cyc, n, 0]),
  });
  const us = (big: number, tiny: number) => ((big - tiny) * 1000) / n;
  f['throughput.1x1.usPerCf'] = sig(us(tp.big1, tp.tiny1));
  f['throughput.2x1.node0.usPerCf'] = sig(us(tp.big2, tp.tiny2));
  f['throughput.2x1.cyclic.usPerCf'] = sig(us(tp.big2c, tp.tiny2c));
  f['throughput.2x1.cyclic.kCfPerS'] = sig(1000 / us(tp.big2c, tp.tiny2c));
  f['startup.1x1.ms'] = sig(tp.tiny1);
  f['startup.2x1.ms'] = sig(tp.tiny2);
  for (const k of ['throughput.1x1.usPerCf', 'throughput.2x1.node0.usPerCf', 'throughput.2x1.cyclic.usPerCf']) units[k] = 'µs';
  units['throughput.2x1.cyclic.kCfPerS'] = 'k CF/s';
  units['startup.1x1.ms'] = units['startup.2x1.ms'] = 'ms';
  notes.push(`throughput: ${n} empty CFs; node0 = default placement (node 1 idle), cyclic = locator_cyclic: i (half the CFs migrate)`);

  // ---- seed 004
  const [sN, sFg, sRep] = q ? [200, 4, 600] : [200, 4, 2000];
  ctx.log(`cluster: seed 004 (${sN}, ${sFg}, ${sRep}) on 2 nodes`);
  const sd = await interleaved(reps, {
    tiny: () => runCli([...N2, seedProgram('seed004'), 8, 1, 1]),
    node0: () => runCli([...N2, seedProgram('seed004'), sN, sFg, sRep]),
    cyclic: () => runCli([...N2, seedProgram('seed004_cyclic'), sN, sFg, sRep]),
    stealable: () => runCli([...N2, seedProgram('seed004_stealable'), sN, sFg, sRep]),
  });
  f['seed004.node0.ms'] = sig(sd.node0);
  f['seed004.cyclic.ms'] = sig(sd.cyclic);
  f['seed004.stealable.ms'] = sig(sd.stealable);
  f['seed004.startup.ms'] = sig(sd.tiny);
  f['seed004.node0OverCyclic'] = sig((sd.node0 - sd.tiny) / (sd.cyclic - sd.tiny));
  f['seed004.node0OverStealable'] = sig((sd.node0 - sd.tiny) / (sd.stealable - sd.tiny));
  f['seed004.node0OverCyclic.raw'] = sig(sd.node0 / sd.cyclic);
  f['seed004.node0OverStealable.raw'] = sig(sd.node0 / sd.stealable);
  for (const k of ['seed004.node0.ms', 'seed004.cyclic.ms', 'seed004.stealable.ms', 'seed004.startup.ms']) units[k] = 'ms';
  for (const k of ['seed004.node0OverCyclic', 'seed004.node0OverStealable', 'seed004.node0OverCyclic.raw', 'seed004.node0OverStealable.raw']) units[k] = '×';
  notes.push(`seed004: N=${sN} FgSize=${sFg} Repeat=${sRep}, 2 nodes × 1 thread; ratios = node-0 time / variant time, net of the startup (tiny run), .raw = whole wall times; ideal on 2 nodes ≈ 2`);

  // ---- efficiency on ~1 ms CFs
  const nEff = q ? 600 : 2000;
  ctx.log(`cluster: efficiency, ${nEff} CFs of 1 ms, 2×1 vs 1×1`);
  const ef = await interleaved(reps, {
    tiny1: () => runCli([...N1, cyc, 2, 1000]),
    big1: () => runCli([...N1, cyc, nEff, 1000]),
    tiny2: () => runCli([...N2, cyc, 2, 1000]),
    big2: () => runCli([...N2, cyc, nEff, 1000]),
  });
  f['efficiency.1x1.ms'] = sig(ef.big1);
  f['efficiency.2x1.ms'] = sig(ef.big2);
  f['efficiency.2x1vs1x1.pct'] = sig((100 * (ef.big1 - ef.tiny1)) / (2 * (ef.big2 - ef.tiny2)));
  f['efficiency.2x1vs1x1.raw.pct'] = sig((100 * ef.big1) / (2 * ef.big2));
  units['efficiency.1x1.ms'] = units['efficiency.2x1.ms'] = 'ms';
  units['efficiency.2x1vs1x1.pct'] = units['efficiency.2x1vs1x1.raw.pct'] = '%';
  targets.push({ key: 'efficiency.2x1vs1x1.pct', op: '>=', value: 90, label: '2 nodes × 1 thread vs 1 × 1 on 1 ms CFs' });
  notes.push(`efficiency: ${nEff} independent 1 ms CFs (locator_cyclic), T1 / (2·T2), net of startup; .raw = whole wall times`);

  // ---- DF transfer latency and bandwidth
  const hops = q ? 3000 : 10_000;
  const [k1m, k2m] = q ? [2, 60] : [2, 200];
  const [k1g, k2g] = q ? [1, 4] : [1, 8];
  ctx.log('cluster: DF ping-pong between 2 nodes (8 B, 1 MiB, 64 MiB)');
  const lat = await interleaved(reps, {
    short2: () => runCli([...N2, pp, 2, 8]),
    long2: () => runCli([...N2, pp, hops + 2, 8]),
    short1: () => runCli([...N1, pp, 2, 8]),
    long1: () => runCli([...N1, pp, hops + 2, 8]),
  });
  const bw = await interleaved(reps, {
    m1: () => runCli([...N2, pp, k1m, MiB]),
    m2: () => runCli([...N2, pp, k2m, MiB]),
    g1: () => runCli([...N2, pp, k1g, 64 * MiB]),
    g2: () => runCli([...N2, pp, k2g, 64 * MiB]),
  });
  const hopUs = ((lat.long2 - lat.short2) * 1000) / hops;
  const hopUsLocal = ((lat.long1 - lat.short1) * 1000) / hops;
  const hop1m = ((bw.m2 - bw.m1) * 1000) / (k2m - k1m);
  const hop64m = ((bw.g2 - bw.g1) * 1000) / (k2g - k1g);
  f['df.latency.8B.usPerHop'] = sig(hopUs);
  f['df.local.8B.usPerHop'] = sig(hopUsLocal);
  f['df.1MiB.usPerHop'] = sig(hop1m);
  f['df.1MiB.MiBps'] = sig(1e6 / hop1m);
  f['df.64MiB.msPerHop'] = sig(hop64m / 1000);
  f['df.64MiB.MiBps'] = sig((64 * 1e6) / hop64m);
  for (const k of ['df.latency.8B.usPerHop', 'df.local.8B.usPerHop', 'df.1MiB.usPerHop']) units[k] = 'µs';
  units['df.64MiB.msPerHop'] = 'ms';
  units['df.1MiB.MiBps'] = units['df.64MiB.MiBps'] = 'MiB/s';
  notes.push(`DF transfer: a hop = one CF on the other node forwarding the DF (DF.copy) = one DF crossing + one CF; latency from ${hops} hops of 8 B; local = the same chain on 1 node (no crossing); bandwidth from ${k1m}→${k2m} hops of 1 MiB and ${k1g}→${k2g} hops of 64 MiB`);

  // ---- against the transport suite's raw node:net figures
  const tr = ctx.previous['transport'];
  const figs = tr?.status === 'ok' ? tr.figures : undefined;
  const rawLat = findFigure(figs, /raw/i, /lat/i) ?? findFigure(figs, /lat/i);
  const rawBw1 = findFigure(figs, /raw/i, /1\s*MiB|1MiB|1m/i, /(MiB|MB|bw|band)/i) ?? findFigure(figs, /raw/i, /(bandwidth|bw|MiBps|MBps)/i);
  const rawBw64 = findFigure(figs, /raw/i, /64/, /(MiB|MB|bw|band)/i) ?? rawBw1;
  if (!figs) notes.push('transport suite did not run or failed: no raw node:net figures to compare with');
  if (rawLat) {
    f['df.latency.xRaw'] = sig(hopUs / rawLat[1]);
    units['df.latency.xRaw'] = '×';
    targets.push({ key: 'df.latency.xRaw', op: '<=', value: 2, label: 'DF latency vs raw node:net' });
    notes.push(`raw latency = transport.${rawLat[0]} = ${rawLat[1]}`);
  } else if (figs) notes.push('transport suite has no raw latency figure (key matching /raw/ and /lat/)');
  if (rawBw1) {
    f['df.1MiB.pctRaw'] = sig((100 * (1e6 / hop1m)) / rawBw1[1]);
    units['df.1MiB.pctRaw'] = '%';
    targets.push({ key: 'df.1MiB.pctRaw', op: '>=', value: 70, label: '1 MiB DF bandwidth vs raw node:net' });
    notes.push(`raw 1 MiB bandwidth = transport.${rawBw1[0]} = ${rawBw1[1]} (assumed MiB/s)`);
  }
  if (rawBw64) {
    f['df.64MiB.pctRaw'] = sig((100 * ((64 * 1e6) / hop64m)) / rawBw64[1]);
    units['df.64MiB.pctRaw'] = '%';
    targets.push({ key: 'df.64MiB.pctRaw', op: '>=', value: 70, label: '64 MiB DF bandwidth vs raw node:net' });
    notes.push(`raw 64 MiB bandwidth = transport.${rawBw64[0]} = ${rawBw64[1]} (assumed MiB/s)`);
  }
  if (figs && !rawBw1) notes.push('transport suite has no raw bandwidth figure (key matching /raw/ and /MiB|bw|bandwidth/)');

  return { status: 'ok', figures: f, units, targets, notes };
}
