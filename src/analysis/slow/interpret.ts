// Recommendations in the seeds' terms (000 §2.3, 003 §3.2), each grounded in this run's numbers:
// S → parallelism degree / fragmentation, distribution of CFs, critical-path priorities, balancing;
// L → distribution of DFs relative to CFs, finer fragmentation to overlap transfers, replication;
// O → fragmentation too fine, runtime implementation, pre-emption, trace playback.

import { dur, pct, share } from './fmt.js';
import type { SlowReport } from './types.js';

const NOTABLE = 10; // percent of T_total worth a recommendation

export function interpretSlow(r: SlowReport): string[] {
  const out: string[] = [];
  if (r.tTotal <= 0) return ['The trace holds no run time: nothing to analyze.'];
  const { p } = r;
  const factors = (['S', 'L', 'O'] as const).map((f) => [f, p[f]] as const).sort((a, b) => b[1] - a[1]);
  out.push(`Useful work P_U = ${pct(p.U)} of T_total = ${dur(r.tTotal)} (${dur(r.tWall)} × ${r.cores} cores); ` +
    `the dominant loss is ${name(factors[0][0])} (P_${factors[0][0]} = ${pct(factors[0][1])}).`);
  for (const [f, v] of factors) {
    if (v < NOTABLE && f !== factors[0][0]) continue;
    if (v <= 0) continue;
    if (f === 'S') out.push(...starvation(r));
    else if (f === 'L') out.push(...latency(r));
    else out.push(...overhead(r));
  }
  if (r.coverage < 0.99) out.push(`Coverage is only ${pct(100 * r.coverage)}: the trace is incomplete (${r.warnings.join('; ') || 'no warnings'}); figures are lower bounds.`);
  const lit = r.models.litvinov2017, kir = r.models.kireev2024;
  if (lit && kir && kir.S > 0) {
    const moved = kir.S - lit.S;
    if (moved > 0.05 * kir.S) out.push(`Under litvinov2017, ${share(moved / kir.S)} of S (${dur(moved)}) is pre-emption that delayed the producers: reserving a core for the runtime would shorten those chains.`);
  }
  return out;
}

function name(f: 'S' | 'L' | 'O'): string {
  return f === 'S' ? 'starvation' : f === 'L' ? 'latency' : 'runtime overhead';
}

function starvation(r: SlowReport): string[] {
  const out: string[] = [];
  const cp = r.criticalPath, S = r.t.S;
  const top = r.blame.starvation.byLabel[0];
  const who = top && r.blame.starvation.total > 0
    ? `; ${share(top.ns / S)} of it waiting on \`${top.key}\` producers` : '';
  const tail = S > 0 ? r.starvationTail / S : 0;
  const path = cp.byLabel.slice(0, 2).map((c) => `\`${c.key}\` ${share(c.share)}`).join(', ');
  if (cp.length > 0 && cp.parallelism < 0.9 * r.cores) {
    out.push(`S = ${pct(r.p.S)}${who}. The execution graph offers only ${cp.parallelism.toFixed(1)}-way parallelism ` +
      `(T_U / critical path) for ${r.cores} cores; the critical path is ${dur(cp.length)} = ${share(cp.ofWall)} of T_wall` +
      `${path ? `, made of ${path}` : ''}. The algorithm is too sequential at this fragmentation: split the data on that path` +
      `${top ? ` (what \`${top.key}\` produces)` : ''} into more fragments so more CFs are ready at once, or run on fewer cores.`);
  } else {
    const nodeS = r.perNode.map((n) => n.S);
    const hi = nodeS.indexOf(Math.max(...nodeS)), lo = nodeS.indexOf(Math.min(...nodeS));
    const perNode = r.tWall * r.threads;
    if (r.nodes > 1 && perNode > 0 && (nodeS[hi] - nodeS[lo]) / perNode > 0.2) {
      out.push(`S = ${pct(r.p.S)}${who}, unevenly: node ${hi} starves ${share(nodeS[hi] / perNode)} of its time, node ${lo} only ` +
        `${share(nodeS[lo] / perNode)}. Ready CFs pile up on some nodes while others idle: change the distribution of CFs ` +
        `(locator_cyclic / another locator) or mark them stealable for dynamic balancing.`);
    } else {
      out.push(`S = ${pct(r.p.S)}${who}, although the graph offers ${cp.parallelism.toFixed(1)}-way parallelism for ${r.cores} cores: ` +
        `the CFs on the critical path (${path || 'see the path'}) are not chosen first. Give critical-path CFs priority, or balance dynamically.`);
    }
  }
  if (tail > 0.5) out.push(`${share(tail)} of S is the tail after workers' last CFs: the run ends unevenly — the last phase is too coarse or badly balanced.`);
  return out;
}

function latency(r: SlowReport): string[] {
  const b = r.blame.latency, L = r.t.L;
  const pair = b.byNodePair[0], df = b.byDfBase[0];
  const parts: string[] = [];
  if (pair) parts.push(`${share(pair.ns / L)} of it on transfers node ${pair.from} → ${pair.to}`);
  if (df) parts.push(`${share(df.ns / L)} waiting for DFs \`${df.key}\``);
  return [`L = ${pct(r.p.L)}${parts.length ? ` (${parts.join(', ')})` : ''}: CFs waited for inputs computed on other nodes. ` +
    `Place the producers and consumers${df ? ` of \`${df.key}\`` : ''} on the same node (locators), fragment finer so transfers ` +
    `overlap with computation, or replicate/cache the DFs that are read remotely.`];
}

function overhead(r: SlowReport): string[] {
  const o = r.overhead, O = r.t.O;
  const perCf = r.cfs > 0 ? O / r.cfs : 0;
  const parts = [
    ['pre-emption of running CFs', o.preempt],
    ['ready-to-start delay', o.startDelay],
    ['computed-to-sent delay', o.sendDelay],
    ['extra system cores', o.systemCores],
  ] as const;
  const main = [...parts].sort((a, b) => b[1] - a[1])[0];
  const out = [`O = ${pct(r.p.O)}, ${dur(perCf)} of runtime work per CF against ${dur(r.meanCfNs)} of useful work per CF; ` +
    `largest part: ${main[0]} (${share(O > 0 ? main[1] / O : 0)}).`];
  if (perCf > 0.25 * r.meanCfNs) {
    out.push(`The fragmentation is too fine for this runtime: make CFs larger (fewer fragments, ~${dur(Math.max(perCf * 10, r.meanCfNs))} or more each). ` +
      `If the execution graph is the same every run, trace playback would remove most of this overhead.`);
  }
  if (main[0] === 'pre-emption of running CFs' && O > 0 && main[1] / O > 0.5) {
    out.push(`Most overhead is system threads pre-empting workers: leave a core to the runtime (fewer worker threads) so CFs run undisturbed.`);
  }
  return out;
}
