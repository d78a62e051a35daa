// A balancing step as a distribution file (runtime/policy/distribution-file.ts): the CFs placed
// elsewhere than they ran and the DFs given an owner, by stable identity, with what was
// predicted for the current placement and for the next.
import { DISTRIBUTION_FORMAT, DISTRIBUTION_VERSION, type Distribution, type PredictedLoad } from '../../runtime/policy/distribution-file.js';
import type { BalanceResult, Prediction } from './balance.js';
import { nameAt } from './names.js';
import type { Profile } from './profile.js';

function load(pr: Prediction): PredictedLoad {
  const perNodeNs = Array.from(pr.busy, (x) => Math.round(x));
  const mean = perNodeNs.reduce((a, b) => a + b, 0) / perNodeNs.length;
  return { makespanNs: Math.round(pr.makespan), perNodeNs, maxOverAvg: mean > 0 ? +(Math.max(...perNodeNs) / mean).toFixed(4) : 1 };
}

export function distributionOf(p: Profile, r: BalanceResult, traces: string[]): Distribution {
  const cfs: Record<string, number> = {}, dfs: Record<string, number> = {};
  if (r.decision === 'apply') {
    for (let c = 0; c < p.n; c++) if (r.next[c] !== r.current[c]) cfs[nameAt(p.gid, c)] = r.next[c]!;
    for (let d = 0; d < p.dfs; d++) if (r.dfNext[d]! >= 0) dfs[nameAt(p.dfKey, d)] = r.dfNext[d]!;
  }
  return {
    format: DISTRIBUTION_FORMAT, version: DISTRIBUTION_VERSION,
    program: p.program, args: p.args, nodes: r.nodes,
    decision: r.decision, ...(r.reason ? { reason: r.reason } : {}),
    made: { strategy: r.strategy, ...(r.quantumNs !== undefined ? { quantumNs: Math.round(r.quantumNs) } : {}), traces, merged: [], at: new Date().toISOString() },
    cfs, dfs,
    predicted: { current: load(r.predicted.current), next: load(r.predicted.next) },
  };
}
