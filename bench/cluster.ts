// Cluster suite, with real node processes: `bin/luna run --nodes N --threads 1`
// timed from spawn to exit; the fixed cost (process start, connection, load) is the median run
// time at a tiny size in the same run and is subtracted where a per-CF or per-hop figure is given.
//  - CF throughput, 2 nodes × 1 thread: N empty independent CFs, default placement (all on node 0)
//    and `locator_cyclic: i` (each node spawns its own CFs of the spread loop; against
//    LUNA_SPREAD_LOOPS=0, where every other CF migrates to node 1); 1 node × 1 thread as reference;
//  - seed 004 (matrix +1 by blocks, examples/seed004) on 2 nodes: all CFs on node 0 vs
//    `locator_cyclic` vs `stealable` add_one CFs — net wall times and ratios;
//  - efficiency of 2 nodes × 1 thread vs 1 × 1 on ~1 ms CFs (independent_cyclic.fa, us = 1000);
//  - DF transfer: a DF forwarded along a chain of hops alternating between the 2 nodes
//    (pingpong.fa): per-hop time for 8 B (latency), 1 MiB and 64 MiB (bandwidth = size / per-hop
//    time, from two hop counts so the DF creation and the startup cancel out), against the raw
//    node:net figures of the transport suite when it ran;
//  - fan-out: a 1 MiB DF of node 0 read by 8 CFs of node 1 against read by 1, per round (the node
//    keeps a copy for its later readers: ~1× when the value crosses once, ~8× when per reader).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { interleaved, ROOT, runCli, section, sig, type Ctx, type SuiteOutput, type Target } from './common.js';
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
  await section(ctx, notes, 'throughput', async () => {
    ctx.log(`cluster: CF throughput, N = ${n}`);
    const ref: Record<string, () => Promise<number>> = q ? {} : {
      tiny1: () => runCli([...N1, ind, 1, 0]),
      big1: () => runCli([...N1, ind, n, 0]),
    };
    const tp: Record<string, number> = await interleaved<string>(reps, {
      ...ref,
      tiny2: () => runCli([...N2, ind, 1, 0]),
      big2: () => runCli([...N2, ind, n, 0]),
      tiny2c: () => runCli([...N2, cyc, 1, 0]),
      big2c: () => runCli([...N2, cyc, n, 0]),
      // the baseline of spread loops: node 0 spawns every CF and migrates node 1's half
      big2cu: () => runCli([...N2, cyc, n, 0], undefined, { LUNA_SPREAD_LOOPS: '0' }),
    });
    const us = (big: number, tiny: number) => ((big - tiny) * 1000) / n;
    if (!q) f['throughput.1x1.usPerCf'] = sig(us(tp.big1, tp.tiny1));
    f['throughput.2x1.node0.usPerCf'] = sig(us(tp.big2, tp.tiny2));
    f['throughput.2x1.cyclic.usPerCf'] = sig(us(tp.big2c, tp.tiny2c));
    f['throughput.2x1.cyclic.kCfPerS'] = sig(1000 / us(tp.big2c, tp.tiny2c));
    f['throughput.2x1.cyclic.unspread.usPerCf'] = sig(us(tp.big2cu, tp.tiny2c));
    f['throughput.2x1.cyclic.xUnspread'] = sig(us(tp.big2cu, tp.tiny2c) / us(tp.big2c, tp.tiny2c));
    if (!q) f['startup.1x1.ms'] = sig(tp.tiny1);
    f['startup.2x1.ms'] = sig(tp.tiny2);
  });
  for (const k of ['throughput.1x1.usPerCf', 'throughput.2x1.node0.usPerCf', 'throughput.2x1.cyclic.usPerCf', 'throughput.2x1.cyclic.unspread.usPerCf']) units[k] = 'µs';
  units['throughput.2x1.cyclic.xUnspread'] = '×';
  units['throughput.2x1.cyclic.kCfPerS'] = 'k CF/s';
  units['startup.1x1.ms'] = units['startup.2x1.ms'] = 'ms';
  notes.push(`throughput: ${n} empty CFs through the CLI${q ? ' (1×1 reference skipped with --quick)' : ''}; node0 = default placement (node 1 idle), cyclic = locator_cyclic: i (each node spawns its half of the loop; unspread = LUNA_SPREAD_LOOPS=0: node 0 spawns all and half migrate)`);

  // ---- seed 004
  const [sN, sFg, sRep] = q ? [200, 4, 400] : [200, 4, 2000];
  await section(ctx, notes, 'seed004', async () => {
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
  });
  for (const k of ['seed004.node0.ms', 'seed004.cyclic.ms', 'seed004.stealable.ms', 'seed004.startup.ms']) units[k] = 'ms';
  for (const k of ['seed004.node0OverCyclic', 'seed004.node0OverStealable', 'seed004.node0OverCyclic.raw', 'seed004.node0OverStealable.raw']) units[k] = '×';
  notes.push(`seed004: N=${sN} FgSize=${sFg} Repeat=${sRep}, 2 nodes × 1 thread; ratios = node-0 time / variant time, net of the startup (tiny run), .raw = whole wall times; ideal on 2 nodes ≈ 2`);

  // ---- efficiency on ~1 ms CFs
  const nEff = q ? 400 : 2000;
  await section(ctx, notes, 'efficiency', async () => {
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
  });
  units['efficiency.1x1.ms'] = units['efficiency.2x1.ms'] = 'ms';
  units['efficiency.2x1vs1x1.pct'] = units['efficiency.2x1vs1x1.raw.pct'] = '%';
  targets.push({ key: 'efficiency.2x1vs1x1.pct', op: '>=', value: 90, label: '2 nodes × 1 thread vs 1 × 1 on 1 ms CFs' });
  notes.push(`efficiency: ${nEff} independent 1 ms CFs (locator_cyclic), T1 / (2·T2), net of startup; .raw = whole wall times`);

  // ---- fan-out: one value, several readers on the other node
  await section(ctx, notes, 'fan-out', async () => {
    const fo = prog('fanout/fanout.fa');
    const rounds = q ? 20 : 100, MB = MiB;
    ctx.log(`cluster: fan-out, ${rounds} rounds of 1 MiB read by 1 and by 8 CFs of the other node`);
    const t = await interleaved(reps, {
      tiny: () => runCli([...N2, fo, 1, 1, MB]),
      one: () => runCli([...N2, fo, rounds + 1, 1, MB]),
      eight: () => runCli([...N2, fo, rounds + 1, 8, MB]),
    });
    const one = ((t.one - t.tiny) * 1000) / rounds, eight = ((t.eight - t.tiny) * 1000) / rounds;
    f['df.fanout.1reader.usPerRound'] = sig(one);
    f['df.fanout.8readers.usPerRound'] = sig(eight);
    f['df.fanout.8readers.xOneReader'] = sig(eight / one);
    units['df.fanout.1reader.usPerRound'] = units['df.fanout.8readers.usPerRound'] = 'µs';
    units['df.fanout.8readers.xOneReader'] = '×';
    targets.push({ key: 'df.fanout.8readers.xOneReader', op: '<=', value: 2, label: '8 readers of one 1 MiB DF on the other node vs 1 (the value crosses once)' });
    notes.push(`fan-out: ${rounds} rounds (net of a 1-round run) of a 1 MiB DF made on node 0 and read by 1 or 8 CFs on node 1, 2 nodes × 1 thread`);
  });

  // ---- DF transfer latency and bandwidth
  const hops = q ? 1500 : 10_000;
  const [k1m, k2m] = q ? [2, 40] : [2, 200];
  // steady state: from the k2m-th hop on, once the nodes reuse memory freed by earlier DFs
  const k3m = q ? 200 : 1000;
  const [k1g, k2g] = q ? [1, 3] : [1, 8];
  let hopUs = NaN, crossUs = NaN, mibps1 = NaN, mibps64 = NaN, mibps1Steady = NaN;
  await section(ctx, notes, 'DF latency', async () => {
    ctx.log('cluster: DF ping-pong between 2 nodes, 8 B');
    const lat = await interleaved(reps, {
      short2: () => runCli([...N2, pp, 2, 8]),
      long2: () => runCli([...N2, pp, hops + 2, 8]),
      short1: () => runCli([...N1, pp, 2, 8]),
      long1: () => runCli([...N1, pp, hops + 2, 8]),
    });
    hopUs = ((lat.long2 - lat.short2) * 1000) / hops;
    const hopUsLocal = ((lat.long1 - lat.short1) * 1000) / hops;
    crossUs = hopUs - hopUsLocal;
    f['df.latency.8B.usPerHop'] = sig(hopUs);
    f['df.local.8B.usPerHop'] = sig(hopUsLocal);
    f['df.latency.8B.crossingUs'] = sig(crossUs);
  });
  await section(ctx, notes, 'DF bandwidth', async () => {
    ctx.log('cluster: DF ping-pong between 2 nodes, 1 MiB and 64 MiB');
    // libc: the same 1 MiB chain with the C library's own allocation policy (LUNA_KEEP_FREED_MB=0)
    const libc = { LUNA_KEEP_FREED_MB: '0' };
    const bw = await interleaved(reps, {
      m1: () => runCli([...N2, pp, k1m, MiB]),
      m2: () => runCli([...N2, pp, k2m, MiB]),
      m3: () => runCli([...N2, pp, k3m, MiB]),
      c1: () => runCli([...N2, pp, k1m, MiB], undefined, libc),
      c2: () => runCli([...N2, pp, k2m, MiB], undefined, libc),
      g1: () => runCli([...N2, pp, k1g, 64 * MiB]),
      g2: () => runCli([...N2, pp, k2g, 64 * MiB]),
    });
    const hop1m = ((bw.m2 - bw.m1) * 1000) / (k2m - k1m);
    f['df.1MiB.libcPolicyXKept'] = sig(((bw.c2 - bw.c1) * 1000) / (k2m - k1m) / hop1m);
    units['df.1MiB.libcPolicyXKept'] = '×';
    const hop64m = ((bw.g2 - bw.g1) * 1000) / (k2g - k1g);
    mibps1 = 1e6 / hop1m;
    const steady1m = ((bw.m3 - bw.m2) * 1000) / (k3m - k2m);
    mibps1Steady = 1e6 / steady1m;
    f['df.1MiB.steady.usPerHop'] = sig(steady1m);
    f['df.1MiB.steady.MiBps'] = sig(mibps1Steady);
    mibps64 = (64 * 1e6) / hop64m;
    f['df.1MiB.usPerHop'] = sig(hop1m);
    f['df.1MiB.MiBps'] = sig(mibps1);
    f['df.64MiB.msPerHop'] = sig(hop64m / 1000);
    f['df.64MiB.MiBps'] = sig(mibps64);
  });
  for (const k of ['df.latency.8B.usPerHop', 'df.local.8B.usPerHop', 'df.latency.8B.crossingUs', 'df.1MiB.usPerHop', 'df.1MiB.steady.usPerHop']) units[k] = 'µs';
  units['df.64MiB.msPerHop'] = 'ms';
  units['df.1MiB.MiBps'] = units['df.64MiB.MiBps'] = units['df.1MiB.steady.MiBps'] = 'MiB/s';
  notes.push(`DF transfer: a hop = one CF on the other node forwarding the DF (DF.copy) = one DF crossing + one CF; latency from ${hops} hops of 8 B; libcPolicyXKept = 1 MiB hop time with the C library's allocation policy (LUNA_KEEP_FREED_MB=0) ÷ with freed memory kept; local = the same chain on 1 node (no crossing); crossingUs = 2-node hop − local hop; bandwidth from ${k1m}→${k2m} hops of 1 MiB and ${k1g}→${k2g} hops of 64 MiB (size / hop time, CF and latency included); steady = 1 MiB from ${k2m}→${k3m} hops, once freed DF memory is reused (the first hops land in memory new to the process)`);

  // ---- against the transport suite's raw node:net figures
  const tr = ctx.previous['transport'];
  const figs = tr?.status === 'ok' ? tr.figures : undefined;
  if (!figs) notes.push('transport suite did not run in this invocation (or failed): no raw node:net figures to compare with');
  else {
    const rtt = findFigure(figs, /raw/i, /rtt/i);
    const oneWay = findFigure(figs, /raw/i, /lat/i);
    const rawLatUs = oneWay ? oneWay[1] : rtt ? rtt[1] / 2 : NaN;
    if (Number.isFinite(rawLatUs)) {
      notes.push(`raw one-way latency = ${oneWay ? `transport.${oneWay[0]}` : `transport.${rtt![0]} / 2`} = ${sig(rawLatUs)} µs`);
      f['df.latency.rawOneWayUs'] = sig(rawLatUs);
      units['df.latency.rawOneWayUs'] = 'µs';
      if (Number.isFinite(crossUs)) {
        f['df.latency.crossingXRaw'] = sig(crossUs / rawLatUs);
        f['df.latency.hopXRaw'] = sig(hopUs / rawLatUs);
        units['df.latency.crossingXRaw'] = units['df.latency.hopXRaw'] = '×';
        targets.push({ key: 'df.latency.crossingXRaw', op: '<=', value: 2, label: 'DF transfer latency vs raw node:net' });
      }
    } else notes.push('transport suite has no raw latency figure (key matching /raw/ and /rtt|lat/)');
    const bw1 = findFigure(figs, /raw/i, /(^|[^0-9])1_?mib/i, /(mibps|mbps|bw|band)/i);
    const bw64 = findFigure(figs, /raw/i, /64_?mib/i, /(mibps|mbps|bw|band)/i);
    if (bw1 && Number.isFinite(mibps1)) {
      f['df.1MiB.pctRaw'] = sig((100 * mibps1) / bw1[1]);
      units['df.1MiB.pctRaw'] = '%';
      targets.push({ key: 'df.1MiB.pctRaw', op: '>=', value: 70, label: '1 MiB DF bandwidth vs raw node:net' });
      notes.push(`raw 1 MiB bandwidth = transport.${bw1[0]} = ${bw1[1]} MiB/s`);
      if (Number.isFinite(mibps1Steady)) {
        f['df.1MiB.steady.pctRaw'] = sig((100 * mibps1Steady) / bw1[1]);
        units['df.1MiB.steady.pctRaw'] = '%';
      }
    }
    if (bw64 && Number.isFinite(mibps64)) {
      f['df.64MiB.pctRaw'] = sig((100 * mibps64) / bw64[1]);
      units['df.64MiB.pctRaw'] = '%';
      targets.push({ key: 'df.64MiB.pctRaw', op: '>=', value: 85, label: '64 MiB DF bandwidth vs raw node:net' });
      notes.push(`raw 64 MiB bandwidth = transport.${bw64[0]} = ${bw64[1]} MiB/s`);
    }
    if (!bw1 && !bw64) notes.push('transport suite has no raw bandwidth figure (key matching /raw/, /1mib|64mib/, /mibps|bw/)');
  }

  return { status: 'ok', figures: f, units, targets, notes };
}
