// A balancing step for people: what a Charm++ user reads with +LBDebug — per-node load min /
// mean / max and max/avg before and as predicted after, the fragments moved, the predicted end
// of the run against the lower bound, the strategy's own time.
import { formatDuration as d } from '../../core/duration.js';
import type { BalanceResult, LoadStats } from './balance.js';

function loadRow(name: string, s: LoadStats): string {
  return `  ${name.padEnd(10)} ${d(s.min).padStart(10)} ${d(s.mean).padStart(10)} ${d(s.max).padStart(10)} ${s.maxOverAvg.toFixed(3).padStart(8)}`;
}

function pct(x: number): string {
  return `${(x * 100).toFixed(1)} %`;
}

export function formatBalance(r: BalanceResult, n: number, dfs: number): string {
  const pr = r.predicted, gain = pr.current.makespan / pr.next.makespan;
  const lines = [
    `strategy ${r.strategy} (${r.weights === 'cpu' ? 'CPU-time' : 'wall-time'} weights${r.typical ? ', the median of each class' : ''})${r.quantumNs !== undefined ? `, quantum ${d(r.quantumNs)}${r.sweep ? ` (automatic: the best predicted of ${r.sweep.length}${r.sweepCfs !== undefined ? `, swept on the first ${r.sweepCfs.toLocaleString('en')} fragments` : ''})` : ''}` : ''}, ${r.nodes} node(s) × ${r.lanes} lane(s)`,
    `  load/node        min       mean        max  max/avg`,
    loadRow('before', r.before),
    loadRow('after', r.after),
    `  moved      ${r.moved.toLocaleString('en')} of ${n.toLocaleString('en')} fragments (${((100 * r.moved) / Math.max(1, n)).toFixed(1)} %${r.searched && r.decision === 'apply' ? `, ${r.searched} by the local search` : ''}${r.grouped && r.decision === 'apply' ? `, ${r.grouped} with their affinity groups` : ''}); ${r.dfsPlaced.toLocaleString('en')} of ${dfs.toLocaleString('en')} DFs placed with their writers`,
    `  predicted  ${d(pr.current.makespan)} → ${d(pr.next.makespan)} (${gain.toFixed(2)}×); lower bound ${d(r.bound.bound)} (work / lanes ${d(r.bound.work / (r.nodes * r.lanes))}, longest chain ${d(r.bound.chain)})`,
    `  transfers  ${r.transfer.samples > 0 ? `fitted to ${r.transfer.samples} measured: ` : 'none measured, defaults: '}${d(r.transfer.latencyNs)} + ${(r.transfer.bytesPerNs * 1e3).toFixed(0)} MB/s`,
    ...(r.host ? [`  machine    ${Array.from(r.host.cores, (c, h) => `host ${h}: ${c} cores shared by node(s) ${Array.from(r.host!.hostOf).flatMap((x, m) => (x === h ? [m] : [])).join(', ')}`).join('; ')}; system thread per message ${d(r.host.msgNs)} + bytes at ${(1e3 / r.host.byteNs).toFixed(0)} MB/s on each side, per fragment ${d(r.host.cfNs)}; wire ${d(r.host.wireNs)}${(r.host.contention ?? 1) > 1 ? `; work ${r.host.contention}× slower with every core busy` : ''}${r.host.capacity ? `; calibrated share of a core per node ${Array.from(r.host.capacity, (x) => x.toFixed(2)).join(' / ')}` : ''}`] : []),
    `  time       strategy ${r.timeMs.strategy.toFixed(1)} ms, quantum sweep ${r.timeMs.sweep.toFixed(1)} ms, local search ${r.timeMs.search.toFixed(1)} ms, predictions ${r.timeMs.predict.toFixed(1)} ms`,
    ...(r.required !== undefined ? [`  guard      a gain of ${pct(r.required)} at least${r.modelError !== undefined ? ` (the model's error on the traced run: ${pct(r.modelError)})` : ''}`] : []),
    r.decision === 'apply' ? '  decision   apply' : `  decision   keep the current placement: ${r.reason}`,
  ];
  return lines.join('\n') + '\n';
}
