// The quantized loads a balancing step plots (seed 004 Fig. 10–12): the current placement and the
// next one, both as the simulator replays them (one clock for both: with CPU-time weights the
// traced wall clock of a busy machine is not comparable), with the step's quantum (at most a
// hundredth of the run, so its phases show).
import type { BalanceResult } from './balance.js';
import type { Profile } from './profile.js';
import { lastEvent, loads, quantize } from './quantize.js';

export interface QuantizedLoads {
  title: string;
  quantumNs: number;
  nodes: number;
  /** W_n,i quantum-major */
  loads: Float64Array;
}

/** Quanta in a plot when the step used none (or one too fine to draw). */
const PLOT_QUANTA = 100, MAX_PLOT_QUANTA = 2000;

export function stepPlots(p: Profile, r: BalanceResult): QuantizedLoads[] {
  const pr = r.predicted;
  const cur = { n: p.n, start: pr.current.start, finish: pr.current.finish }, nxt = { n: p.n, start: pr.next.start, finish: pr.next.finish };
  const tEnd = Math.max(lastEvent(cur), lastEvent(nxt));
  // the step's quantum unless it leaves too few quanta to see the run's phases, or too many to draw
  let q = Math.min(r.quantumNs ?? Infinity, tEnd / PLOT_QUANTA);
  if (tEnd / q > MAX_PLOT_QUANTA) q = tEnd / MAX_PLOT_QUANTA;
  const before = quantize(cur, q, tEnd);
  const after = quantize(nxt, q, tEnd);
  return [
    { title: 'current placement (replayed)', quantumNs: q, nodes: r.nodes, loads: loads(before, r.current, r.nodes) },
    { title: `next run, predicted (${r.strategy}${r.decision === 'keep' ? ': placement kept' : ''})`, quantumNs: q, nodes: r.nodes, loads: loads(after, r.next, r.nodes) },
  ];
}
