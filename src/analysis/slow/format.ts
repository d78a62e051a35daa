// Human-readable table of a SlowReport.

import { dur, pct, share } from './fmt.js';
import type { Slou, SlowReport } from './types.js';

function row(name: string, v: Slou, total: number): string {
  const c = (x: number) => `${dur(x).padStart(11)} ${pct(total > 0 ? (100 * x) / total : 0).padStart(6)}`;
  return `${name.padEnd(22)}${c(v.S)}${c(v.L)}${c(v.O)}${c(v.W)}${c(v.U)}`;
}

export function formatSlowTable(r: SlowReport): string {
  const L: string[] = [];
  L.push(`SLOW analysis (${r.model}) of ${r.program || 'run'}: ${r.nodes} node(s) × ${r.threads} worker thread(s) = ${r.cores} cores`);
  L.push(`T_wall ${dur(r.tWall)}   T_total ${dur(r.tTotal)}   Σ ${dur(r.sum)}   coverage ${pct(100 * r.coverage, 2)}   CFs ${r.cfs} (mean ${dur(r.meanCfNs)})`);
  L.push('');
  L.push(`${''.padEnd(22)}${['S', 'L', 'O', 'W', 'U'].map((f) => `T_${f}`.padStart(11) + 'P_'.padStart(5) + f).join('')}`);
  for (const [m, v] of Object.entries(r.models)) if (v) L.push(row(m, v, r.tTotal));
  if (r.nodes > 1) r.perNode.forEach((v, i) => L.push(row(`node ${i}`, v, r.tWall * r.threads)));
  if (r.perThread.length <= 16) for (const t of r.perThread) L.push(row(`  ${t.node}.${t.thread}`, t, r.tWall));
  const o = r.overhead;
  L.push('');
  L.push(`O parts: pre-emption ${dur(o.preempt)}, ready→start ${dur(o.startDelay)}, computed→sent ${dur(o.sendDelay)}, system cores ${dur(o.systemCores)}; S tail ${dur(r.starvationTail)}; sysBusy ${dur(r.sysBusy.total)}`);
  L.push('');
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
  }
  if (bl.total > 0) {
    L.push(`latency ${dur(bl.total)} blamed on transfers: ` + bl.byDfBase.slice(0, 5).map((c) => `${c.key} ${share(c.share)}`).join(', '));
    L.push('  node pairs: ' + bl.byNodePair.slice(0, 5).map((c) => `${c.from}→${c.to} ${share(c.share)}`).join(', '));
  }
  const cp = r.criticalPath;
  L.push(`critical path ${dur(cp.length)} (${share(cp.ofWall)} of T_wall, ${cp.cfs} CFs, parallelism ${cp.parallelism.toFixed(2)}): ` +
    cp.byLabel.slice(0, 5).map((c) => `${c.key} ${share(c.share)}`).join(', '));
  for (const w of r.warnings) L.push(`warning: ${w}`);
  return L.join('\n');
}
