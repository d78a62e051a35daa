// Closing the streaming pass: tails of the worker timelines, extra system cores, and the report.

import { topOf } from './accum.js';
import type { SlowAnalyzer } from './analyzer.js';
import { collect } from './critical.js';
import { graphFloor, replay } from '../sim/run-graph.js';
import { displayCf } from '../../core/cfid.js';
import type { TraceManifest } from '../../trace/manifest.js';
import type { RunStatus } from '../../trace/schema.js';
import { F_L, F_O, F_S, F_U, F_W, FACTORS, UNITS, slou, type CodeRow, type Floor, type LabelRow, type MachineRow, type Culprit, type PathStep, type Placement, type Predictions, type RunEnd, type Slou, type SlowReport, type ThreadRow } from './types.js';

const NF = FACTORS.length;

export function finishReport(an: SlowAnalyzer): SlowReport {
  const m = an.m;
  m.end();
  const topK = an.opts.topK ?? 10;
  const t0 = an.origin();
  // the end: the last programFinish, or a later record (a worker finishing its CF after its
  // node ended a failed run; far later records were dropped as damage)
  let tEnd = m.tEnd;
  if (!(tEnd >= m.lastT)) tEnd = m.lastT;
  if (!(t0 === t0)) return emptyReport(an);
  const tWall = Math.max(0, tEnd - t0);
  // a node that recorded nothing (killed before its first record) is missing, not idle: its
  // workers are left out of T_total rather than counted as starved for the whole run
  const missing: number[] = [];
  for (let n = 0; n < an.N; n++) if (m.perNode[n] === 0) missing.push(n);
  const present = an.N - missing.length;

  for (let slot = 0; slot < an.running.length; slot++) {
    if (m.perNode[Math.floor(slot / an.T)] === 0) continue;
    let a = an.idle[slot]!;
    if (!(a === a)) a = t0;
    const r = an.running[slot];
    if (r) {
      // a CF that never finished: split its idle interval as usual, its execution counts as U
      m.warn('CF still running at program end');
      const f = r.f;
      an.account(f, f.inputs ?? [], r.a, tEnd, tEnd - f.start, r);
      continue;
    }
    const first = an.rankFirst ? an.rankFirst[slot]! : NaN, last = an.rankLast ? an.rankLast[slot]! : NaN;
    if (first >= a && last <= tEnd) {
      // an SPMD rank: its program from its first to its last operation is U, less the waits in
      // it (W); before and after, S (the program not started, or returned), less waits there
      const c = an.carveIdle(slot, a, tEnd, first, last, last, null, null);
      const u = last - first - c[1]!, w = c[4]!, s0 = first - a - c[0]!, s1 = tEnd - last - c[3]!;
      an.add(F_U, u, slot, first, last, null, null); an.kireev[F_U] += u;
      an.add(F_S, s0, slot, a, first, null, null); an.add(F_S, s1, slot, last, tEnd, null, null);
      an.kireev[F_S] += s0 + s1; an.kireev[F_W] += w; an.sTail += s0 + s1;
      continue;
    }
    if (tEnd > a) {
      // the tail is S but for the waits outside any CF in it (an SPMD rank at its last barrier)
      const w = an.carveIdle(slot, a, tEnd, tEnd, tEnd, tEnd, null, null)[4]!;
      const s = tEnd - a - w;
      an.add(F_S, s, slot, a, tEnd, null, null); an.kireev[F_S] += s; an.kireev[F_W] += w; an.sTail += s;
      if (an.laneCfs[slot] === 0) an.sIdleLanes += s;
    }
  }
  const sysCores = Math.max(0, an.opts.systemCores ?? 0);
  const extra = tWall * sysCores * present;
  an.tot[F_O] += extra; an.kireev[F_O] += extra; an.ovh.systemCores = extra;

  const cores = present * an.T + present * sysCores;
  const tTotal = tWall * cores;
  const t = slou(an.tot);
  const sum = t.S + t.L + t.O + t.W + t.U;
  const pct = (v: number) => (tTotal > 0 ? (100 * v) / tTotal : 0);
  const models: SlowReport['models'] = { kireev2024: slou(an.kireev) };
  if (an.litvinov) {
    const k = models.kireev2024!;
    models.litvinov2017 = { ...k, S: k.S - an.litMoved, O: k.O + an.litMoved };
  }

  const perThread: ThreadRow[] = [];
  for (let s = 0; s < an.running.length; s++) {
    perThread.push({ node: Math.floor(s / an.T), thread: (s % an.T) + 1, ...slou(an.perThread, s * NF) });
  }
  const perCode: CodeRow[] = [...an.perCode.rows.entries()]
    .map(([code, v]) => ({ code, name: an.codeName(code), cfs: v[NF], ...slou(v) }))
    .sort((a, b) => idleOf(b) - idleOf(a));
  const perLabel: LabelRow[] = [...an.perLabel.rows.entries()]
    .map(([label, v]) => ({ label, cfs: v[NF], ...slou(v) }))
    .sort((a, b) => idleOf(b) - idleOf(a));

  const cp = an.cpEnd;
  const agg = cp ? collect(cp) : { cfs: 0, byCode: new Map<number, number>(), byLabel: new Map<string, number>() };
  const cpLen = cp?.len ?? 0;
  const tail: PathStep[] = [];
  let steps = 0;
  for (let n = cp; n; n = n.prev, steps++) if (tail.length < topK) tail.push({ gid: n.gid, label: n.label, name: displayCf(n.label, n.labelIdx), code: an.codeName(n.code), ns: n.ns });

  const warnings = [...m.warnings.entries()].map(([w, n]) => (n > 1 ? `${w} (${n}×)` : w));
  if (an.history?.truncated) warnings.push(`litvinov2017: producer-thread history truncated ${an.history.truncated}×`);

  return {
    run: runEndOf(an.manifest, m.status),
    model: an.model,
    compare: !!an.opts.compare,
    program: an.manifest.program,
    nodes: an.N, threads: an.T, cores,
    machines: machinesOf(an.manifest, an.N, an.T),
    launcher: an.manifest.launcher ?? 'unknown',
    placement: placementOf(an),
    tStart: t0, tWall, tTotal,
    t,
    p: { S: pct(t.S), L: pct(t.L), O: pct(t.O), W: pct(t.W), U: pct(t.U) },
    sum,
    coverage: tTotal > 0 ? sum / tTotal : 0,
    models,
    overhead: { ...an.ovh },
    starvationTail: an.sTail,
    perNode: Array.from({ length: an.N }, (_, i) => slou(an.perNode, i * NF)),
    perThread,
    series: { ...(an.series ? { windowNs: an.series.width, points: an.series.points(tEnd) } : { windowNs: 0, points: [] }), explicit: !!(an.opts.windowNs && an.opts.windowNs > 0), ...(an.series && an.series.width !== an.series.requested ? { requestedNs: an.series.requested } : {}) },
    perCode, perLabel,
    blame: {
      starvation: {
        total: an.sBlamed,
        byCode: topOf(an.sByCode, topK, an.sBlamed, (c) => an.codeName(c)),
        byLabel: topOf(an.sByLabel, topK, an.sBlamed, (l) => l),
        byCf: an.sByCf.top(topK, an.sBlamed),
        other: unblamedStarvation(an, t.S),
        byProducerState: { notReady: an.sByState[0]!, queued: an.sByState[1]!, running: an.sByState[2]!, unknown: an.sByState[3]! },
      },
      latency: {
        total: an.lBlamed,
        byDfBase: topOf(an.lByDfBase, topK, an.lBlamed, (n) => n),
        byDf: an.lByDf.top(topK, an.lBlamed),
        byNodePair: [...an.lByPair.entries()].sort((a, b) => b[1] - a[1]).slice(0, topK)
          .map(([k, ns]) => ({ from: Math.floor(k / an.N), to: k % an.N, ns, share: an.lBlamed > 0 ? ns / an.lBlamed : 0 })),
        byProducerLabel: topOf(an.lByProdLabel, topK, an.lBlamed, (l) => l),
      },
      waiting: {
        total: an.wBlamed,
        waits: an.waitCount,
        byResource: an.wByResource.top(topK, an.wBlamed),
        byKind: topOf(an.wByKind, topK, an.wBlamed, (k) => k),
        byWaiter: an.wByWaiter.top(topK, an.wBlamed),
      },
    },
    criticalPath: {
      length: cpLen,
      ofWall: tWall > 0 ? cpLen / tWall : 0,
      parallelism: cpLen > 0 ? t.U / cpLen : 0,
      cfs: agg.cfs,
      steps,
      byCode: topOf(agg.byCode, topK, cpLen, (c) => an.codeName(c)),
      byLabel: topOf(agg.byLabel, topK, cpLen, (l) => l),
      tail,
    },
    families: [...an.families.entries()].map(([family, x]) => ({ family, ...x })),
    produces: [...an.produces.entries()].map(([label, family]) => ({ label, family })),
    ...predict(an, t, tTotal, cpLen),
    floor: floorOf(an, tWall),
    sysBusy: { total: an.busy.reduce((a, b) => a + b, 0), perNode: [...an.busy] },
    unspent: { dfs: an.unspent.dfs, bytes: an.unspent.bytes, largest: an.unspent.largest.map((u) => ({ ...u })) },
    cfs: an.cfCount,
    meanCfNs: an.cfCount > 0 ? t.U / an.cfCount : 0,
    events: m.events,
    warnings,
    missingNodes: missing,
    damage: m.damage.report(),
    units: UNITS,
  };
}

/**
 * How the run ended: the launcher's final word in the manifest, else what the nodes' programFinish
 * records said (a manifest left at `running` by a killed launcher), else `running` / `unknown`.
 */
export function runEndOf(mf: TraceManifest, recorded: RunStatus | undefined): RunEnd {
  const status = mf.status && mf.status !== 'running' ? mf.status : recorded ?? mf.status ?? 'unknown';
  return { status, ...(mf.message ? { message: mf.message } : {}), complete: status === 'completed' };
}

/**
 * The machines of the run from the manifest. A trace without `machines` (older runs) but with
 * node 0's `cores` is placed on one machine only when it had one node: where the other nodes of
 * an older multi-node trace ran is unknown, and guessing could invent an oversubscription.
 */
function machinesOf(mf: TraceManifest, N: number, T: number): MachineRow[] {
  const known = mf.machines ?? (mf.cores && N === 1 ? [{ host: '', cores: mf.cores, nodes: [0] }] : []);
  return known.filter((x) => x.cores > 0).map((x) => {
    const keep = x.nodes.map((n) => n >= 0 && n < N);
    const nodes = x.nodes.filter((_, i) => keep[i]);
    const nodeCpus = x.nodeCpus && x.nodeCpus.length === x.nodes.length ? x.nodeCpus.filter((_, i) => keep[i]) : nodes.map(() => x.cores);
    const workers = nodes.length * T;
    return { host: x.host, cores: x.cores, cpus: Math.max(x.cores, x.cpus ?? 0), nodes, nodeCpus, workers, oversubscription: workers / x.cores };
  });
}

function placementOf(an: SlowAnalyzer): Placement {
  const perNode = new Array<number>(an.N).fill(0);
  an.laneCfs.forEach((c, s) => { perNode[Math.floor(s / an.T)] += c; });
  // a node that recorded nothing is missing from the trace (the model warns), not idle
  const idleNodes = perNode.flatMap((c, n) => (c === 0 && an.m.perNode[n]! > 0 ? [n] : []));
  const idleThreads: Placement['idleThreads'] = [];
  an.laneCfs.forEach((c, s) => {
    const node = Math.floor(s / an.T);
    if (c === 0 && perNode[node] > 0) idleThreads.push({ node, thread: (s % an.T) + 1 });
  });
  let startup = 0;
  an.firstStart.forEach((f) => { if (f === f && f - an.origin() > startup) startup = f - an.origin(); });
  return { perNode, perThread: [...an.laneCfs], idleNodes, idleThreads, idleNs: an.sIdleLanes, startupNs: startup };
}

/** The S no producer's finish ended: idle workers, tails after the last CFs, inputs without a producer. */
function unblamedStarvation(an: SlowAnalyzer, S: number): Culprit[] {
  const idle = an.sIdleLanes, tail = Math.max(0, an.sTail - an.sIdleLanes);
  const rest = Math.max(0, S - an.sBlamed - an.sTail);
  return ([['worker threads that ran no fragment', idle], ['after the workers\' last fragments', tail], ['inputs without a recorded producer', rest]] as const)
    .filter(([, ns]) => ns > 0).map(([key, ns]) => ({ key, ns, share: S > 0 ? ns / S : 0 }));
}

/** Starvation share from which the run's graph is replayed (the advice on order and threads applies from there). */
const PREDICT_FROM = 0.1;

/**
 * Replays of the run's graph (sim/run-graph.ts) for the options advice may offer: critical-path
 * order, fewer worker threads. Only when starvation or idle workers make them worth offering.
 */
function predict(an: SlowAnalyzer, t: Slou, tTotal: number, cpLen: number): { predictions: Predictions | null; predictionsSkipped: string } {
  const g = an.graph;
  const idleLanes = an.laneCfs.some((c) => c === 0);
  if (!g) return { predictions: null, predictionsSkipped: 'not asked' };
  if (!(tTotal > 0 && (t.S >= PREDICT_FROM * tTotal || idleLanes))) return { predictions: null, predictionsSkipped: 'little starvation: nothing to predict' };
  if (!g.whole) return { predictions: null, predictionsSkipped: `the run has more than ${g.limit} fragments` };
  const baselineNs = replay(g, 'run');
  const criticalOrderNs = replay(g, 'critical');
  // fewer threads: as many as the graph's parallelism keeps busy, and one fewer than the run had
  const ks = new Set<number>();
  if (cpLen > 0) ks.add(Math.max(1, Math.ceil(t.U / cpLen)));
  ks.add(an.T - 1);
  // the busiest node's lanes that ran anything (the idle-threads advice)
  const used = new Array<number>(an.N).fill(0);
  an.laneCfs.forEach((c, slot) => { if (c > 0) used[Math.floor(slot / an.T)]++; });
  ks.add(Math.max(...used));
  const threads = [...ks].filter((k) => k >= 1 && k < an.T).sort((a, b) => a - b).map((k) => ({ threads: k, ns: replay(g, 'run', k) }));
  return { predictions: { baselineNs, criticalOrderNs, threads }, predictionsSkipped: '' };
}

/** The graph's floor (sim/run-graph.ts `graphFloor`), whatever the losses: it says how much of T_wall the graph itself needs. */
function floorOf(an: SlowAnalyzer, tWall: number): Floor | null {
  const g = an.graph;
  if (!g || !g.whole || g.n === 0) return null;
  const f = graphFloor(g);
  return { ns: f.ns, ofWall: tWall > 0 ? f.ns / tWall : 0, boundNs: f.boundNs };
}

function idleOf(r: Slou): number { return r.S + r.L + r.O; }

function emptyReport(an: SlowAnalyzer): SlowReport {
  an.m.warn('empty trace');
  an.m.tStart = 0; an.m.tEnd = 0; an.m.firstT = 0; an.m.lastT = 0;
  return finishReport(an);
}
