// Human-readable table of a SlowReport.

import { dur, pct, share } from './fmt.js';
import { runEndLine } from './interpret.js';
import type { Slou, SlowReport } from './types.js';
import { MAX_WINDOWS } from './accum.js';

function row(name: string, v: Slou, total: number): string {
  const c = (x: number) => `${dur(x).padStart(11)} ${pct(total > 0 ? (100 * x) / total : 0).padStart(6)}`;
  return `${name.padEnd(22)}${c(v.S)}${c(v.L)}${c(v.O)}${c(v.W)}${c(v.U)}`;
}

function machinesLine(r: SlowReport): string {
  if (r.machines.length === 0) return '';
  const m = r.machines.map((x) => {
    const over = x.oversubscription > 1 ? `, oversubscribed ${x.oversubscription.toFixed(1)}×` : '';
    const narrow = x.nodeCpus.map((c, i) => [x.nodes[i]!, c] as const).filter(([, c]) => c < x.cpus);
    const bound = narrow.length ? `, node(s) ${narrow.map(([n]) => n).join(', ')} bound to ${[...new Set(narrow.map(([, c]) => c))].join('/')} CPU(s) each` : '';
    return `${x.host || 'this machine'}: ${x.cores} CPU(s) for ${x.workers} worker(s)${x.cpus > x.cores ? ` (of ${x.cpus})` : ''}${over}${bound}`;
  });
  return `; ${m.join('; ')}`;
}

export function formatSlowTable(r: SlowReport): string {
  const L: string[] = [];
  // how an unfinished run ended comes first: every figure below covers only its part before that
  const ended = runEndLine(r);
  if (ended) {
    L.push(ended);
    for (const line of (r.run.message ?? '').split('\n').filter((x) => x.trim())) L.push(`  | ${line}`);
    L.push('');
  }
  L.push(`SLOW analysis (${r.model}) of ${r.program || 'run'}: ${r.nodes} node(s) × ${r.threads} worker thread(s) = ${r.cores} workers${r.missingNodes?.length ? ` (node(s) ${r.missingNodes.join(', ')} missing)` : ''}${machinesLine(r)}`);
  L.push(`T_wall ${dur(r.tWall)}   T_total ${dur(r.tTotal)}   Σ ${dur(r.sum)}   coverage ${pct(100 * r.coverage, 2)}   CFs ${r.cfs} (mean ${dur(r.meanCfNs)})`);
  L.push('');
  L.push(`${''.padEnd(22)}${['S', 'L', 'O', 'W', 'U'].map((f) => `T_${f}`.padStart(11) + 'P_'.padStart(5) + f).join('')}`);
  // the other model is shown only when it was asked for
  if (r.compare) { for (const [m, v] of Object.entries(r.models)) if (v) L.push(row(m, v, r.tTotal)); }
  else L.push(row(r.model, r.t, r.tTotal));
  const missing = new Set(r.missingNodes ?? []);
  if (r.nodes > 1) r.perNode.forEach((v, i) => L.push(missing.has(i) ? `${`node ${i}`.padEnd(22)}missing (recorded nothing; left out of the totals)` : row(`node ${i}`, v, r.tWall * r.threads)));
  if (r.perThread.length <= 16) for (const t of r.perThread) if (!missing.has(t.node)) L.push(row(`  ${t.node}.${t.thread}`, t, r.tWall));
  const pl = r.placement;
  if (r.nodes > 1) L.push(`CFs per node: ${pl.perNode.map((c, n) => `${n}: ${c}`).join(', ')}${pl.idleNodes.length ? `  (no fragment on node(s) ${pl.idleNodes.join(', ')})` : ''}`);
  if (pl.idleThreads.length) L.push(`worker threads that ran no fragment: ${pl.idleThreads.map((x) => `${x.node}.${x.thread}`).join(', ')}`);
  const o = r.overhead;
  L.push('');
  L.push(`O parts: pre-emption ${dur(o.preempt)}, ready→start ${dur(o.startDelay)} (system thread busy ${dur(o.startDelaySystemBusy)}), computed→sent ${dur(o.sendDelay)}, system cores ${dur(o.systemCores)}; S tail ${dur(r.starvationTail)}${pl.idleNs > 0 ? ` (of which idle workers ${dur(pl.idleNs)})` : ''}; sysBusy ${dur(r.sysBusy.total)}`);
  L.push('');
  L.push(...formatDynamics(r));
  L.push('per code fragment (idle time charged to the CF that ended it):');
  for (const c of r.perCode.slice(0, 10)) L.push(row(`${c.name} ×${c.cfs}`, c, r.tTotal));
  if (r.perLabel.length > 1) {
    L.push('per CF label:');
    for (const c of r.perLabel.slice(0, 10)) L.push(row(`${c.label} ×${c.cfs}`, c, r.tTotal));
  }
  const bs = r.blame.starvation, bl = r.blame.latency;
  L.push('');
  if (bs.total > 0) {
    L.push(`starvation ${dur(bs.total)} blamed on producers: ` + bs.byLabel.slice(0, 5).map((c) => `${c.key} ${share(c.share)}`).join(', '));
    L.push('  top CFs: ' + bs.byCf.slice(0, 5).map((c) => `${c.label}#${c.key} ${dur(c.ns)}`).join(', '));
    const ps = bs.byProducerState;
    if (ps) L.push(`  while the producer was: not ready ${dur(ps.notReady)}, ready and not started ${dur(ps.queued)}, running ${dur(ps.running)}${ps.unknown > 0 ? `, not known ${dur(ps.unknown)}` : ''}`);
  }
  if (bs.other.length) L.push(`starvation no producer ended: ${bs.other.map((c) => `${c.key} ${dur(c.ns)} (${share(c.share)} of S)`).join(', ')}`);
  if (bl.total > 0) {
    L.push(`latency ${dur(bl.total)} blamed on transfers: ` + bl.byDfBase.slice(0, 5).map((c) => `${c.key} ${share(c.share)}`).join(', '));
    L.push('  node pairs: ' + bl.byNodePair.slice(0, 5).map((c) => `${c.from}→${c.to} ${share(c.share)}`).join(', '));
  }
  const bw = r.blame.waiting;
  if (bw.total > 0) {
    L.push(`waiting ${dur(bw.total)} in ${bw.waits} wait(s) for resources: ` + bw.byResource.slice(0, 5).map((c) => `${c.key} ${share(c.share)}`).join(', '));
    L.push('  who waited: ' + bw.byWaiter.slice(0, 5).map((c) => `${c.label ? `${c.label}#` : ''}${c.key} ${dur(c.ns)}`).join(', '));
  }
  const cp = r.criticalPath;
  L.push(`critical path ${dur(cp.length)} (${share(cp.ofWall)} of T_wall, ${cp.cfs} CFs, parallelism ${cp.parallelism.toFixed(2)}): ` +
    cp.byLabel.slice(0, 5).map((c) => `${c.key} ${share(c.share)}`).join(', '));
  const fl = r.floor;
  if (fl) L.push(`graph floor ${dur(fl.ns)} (${share(fl.ofWall)} of T_wall): the graph with a runtime that costs nothing — each CF its CPU time, all known at the start, ` +
    `critical path first, on ${r.nodes} × ${r.threads} workers; no schedule is shorter than ${dur(fl.boundNs)}`);
  for (const w of r.warnings) L.push(`warning: ${w}`);
  return L.join('\n');
}

const BARS = ' ▁▂▃▄▅▆▇█';
const SPARK_MAX = 64;
const DYN_FACTORS = ['S', 'L', 'O', 'W', 'U'] as const;

/**
 * SLOW over time: a sparkline per factor (each column the factor's share of the workers' time
 * in its windows), and with an explicit window width a table with one row per window.
 */
export function formatDynamics(r: SlowReport): string[] {
  const pts = r.series.points, w = r.series.windowNs;
  if (pts.length < 2 || !(w > 0) || r.cores <= 0) return [];
  const cap = (from: number, to: number): number => {
    // the workers' time in windows [from, to): the last window may be cut by the run's end
    const t0 = from * w, t1 = Math.min(to * w, r.tWall);
    return Math.max(0, t1 - t0) * r.cores;
  };
  const group = Math.ceil(pts.length / SPARK_MAX);
  const cols = Math.ceil(pts.length / group);
  const L: string[] = [];
  if (r.series.explicit && r.series.requestedNs !== undefined) L.push(`windows of ${dur(r.series.requestedNs)} would be more than ${MAX_WINDOWS}: using ${dur(w)}`);
  L.push(`dynamics: ${pts.length} windows of ${dur(w)}${group > 1 ? `, ${group} per column` : ''} (share of the workers' time, ▁ low … █ all):`);
  for (const f of DYN_FACTORS) {
    let line = '';
    for (let c = 0; c < cols; c++) {
      let v = 0;
      for (let i = c * group; i < Math.min(pts.length, (c + 1) * group); i++) v += pts[i]![f];
      const t = cap(c * group, Math.min(pts.length, (c + 1) * group));
      const x = t > 0 ? Math.min(1, v / t) : 0;
      line += BARS[x <= 0 ? 0 : Math.max(1, Math.round(x * (BARS.length - 1)))];
    }
    L.push(`  ${f} |${line}|`);
  }
  if (r.series.explicit) {
    L.push(`${'  window from'.padEnd(16)}${DYN_FACTORS.map((f) => `P_${f}`.padStart(8)).join('')}`);
    pts.forEach((v, i) => {
      const t = cap(i, i + 1);
      L.push(`${`  ${dur(i * w)}`.padEnd(16)}${DYN_FACTORS.map((f) => pct(t > 0 ? (100 * v[f]) / t : 0).padStart(8)).join('')}`);
    });
  }
  L.push('');
  return L;
}
