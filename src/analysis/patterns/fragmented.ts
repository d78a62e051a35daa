// Patterns of fragmented programs on the engine's results tree. They are derived from SLOW's own
// accounting (SlowObserver: the split of every idle interval and the pre-emption of every
// execution), so they sum to SLOW's figures of the same trace by construction:
//   late producer  = S of the idle intervals     (T_S less the tails after each lane's last CF)
//   slow transfer  = L                           (T_L)
//   system delay   = O of the idle intervals     (send delay + start delay)
//   oversubscribed = pre-emption O of executions on machines with more workers than CPUs
// and the imbalance within a time quantum (seed 004 §2.2) from the CFs' quantized load per node.
import type { TraceModel } from '../../trace/model/model.js';
import type { DfRec, Fragment } from '../../trace/model/records.js';
import type { SlowObserver } from '../slow/types.js';
import { P } from './catalog.js';
import type { PatternResults } from './results.js';

/** Quanta the run is cut into when no quantum is given (seed 004 leaves the choice open). */
export const DEFAULT_QUANTA = 32;
/** Finest load bin (ns); bins double when a run needs more than MAX_BINS of them. */
const BIN0 = 10_000;
const MAX_BINS = 1 << 16;

/** CF load per node over time, in bins that coarsen as the run grows. */
class LoadBins {
  width = BIN0;
  n = 0;
  readonly perNode: Float64Array[];
  constructor(nodes: number, readonly t0: number) {
    this.perNode = Array.from({ length: nodes }, () => new Float64Array(1024));
  }

  add(node: number, x: number, y: number): void {
    if (!(y > x)) return;
    while ((y - this.t0) / this.width >= MAX_BINS) this.coarsen();
    const need = Math.floor((y - this.t0) / this.width) + 1;
    if (need > this.n) this.n = need;
    let a = this.perNode[node]!;
    if (need > a.length) {
      let len = a.length;
      while (len < need) len *= 2;
      const b = new Float64Array(len);
      b.set(a);
      this.perNode[node] = a = b;
    }
    const w = this.width;
    for (let i = Math.max(0, Math.floor((x - this.t0) / w)); i < need; i++) {
      const lo = this.t0 + i * w, hi = lo + w;
      const ov = Math.min(y, hi) - Math.max(x, lo);
      if (ov > 0) a[i] += ov;
    }
  }

  private coarsen(): void {
    for (const a of this.perNode) {
      for (let i = 0; i < a.length / 2; i++) a[i] = a[2 * i]! + (a[2 * i + 1] ?? 0);
      a.fill(0, a.length / 2);
    }
    this.width *= 2;
    this.n = Math.ceil(this.n / 2);
  }
}

export class FragmentedPatterns implements SlowObserver {
  private bins: LoadBins | null = null;
  private readonly oversubscribed: Uint8Array;
  /** nodes whose machine is known (the pattern says nothing about the others) */
  readonly machinesKnown: boolean;
  quantumNs = NaN;

  constructor(private readonly m: TraceModel, private readonly out: PatternResults, private readonly quantum?: number) {
    this.oversubscribed = new Uint8Array(m.N);
    const mf = m.manifest;
    const machines = mf.machines ?? (m.N === 1 && mf.cores ? [{ host: '', cores: mf.cores, nodes: [0] }] : []);
    // the CPUs the run's processes could use there: more workers than that are time-shared
    for (const mc of machines) if (mc.nodes.length * m.T > mc.cores) for (const n of mc.nodes) if (n < m.N) this.oversubscribed[n] = 1;
    this.machinesKnown = machines.length > 0;
    m.listen({ finish: (f) => this.load(f) });
  }

  /** `label (file:line:col)`: the spawn site of a CF, as call site of its lane's patterns. */
  private site(f: Fragment): number {
    const s = this.m.sites[f.site];
    return this.out.site(s ? `${f.label} (${s.file}:${s.line}:${s.col})` : f.label);
  }

  idle(m: Fragment, s: number, _producer: Fragment | null, oSend: number, l: number, _lastInput: DfRec | null, oStart: number): void {
    if (m.slot < 0) return;
    const o = oSend + oStart;
    if (!(s > 0 || l > 0 || o > 0)) return;
    const site = this.site(m);
    if (s > 0) { this.out.add(P.late_producer, site, m.slot, s); this.out.occurred(P.late_producer); }
    if (l > 0) { this.out.add(P.slow_transfer, site, m.slot, l); this.out.occurred(P.slow_transfer); }
    if (o > 0) { this.out.add(P.system_delay, site, m.slot, o); this.out.occurred(P.system_delay); }
  }

  preempt(m: Fragment, ns: number): void {
    if (m.slot < 0 || !(ns > 0) || !this.oversubscribed[m.node]) return;
    this.out.add(P.oversubscribed_cores, this.site(m), m.slot, ns);
    this.out.occurred(P.oversubscribed_cores);
  }

  private load(f: Fragment): void {
    if (f.slot < 0 || !(f.finish > f.start)) return;
    this.bins ??= new LoadBins(this.m.N, this.m.origin());
    this.bins.add(f.node, Math.max(f.start, this.bins.t0), f.finish);
  }

  /** The imbalance of each quantum: every node charged its distance to the most loaded node. */
  end(): void {
    const b = this.bins;
    if (!b || this.m.N < 2 || b.n === 0) return;
    const per = this.quantum && this.quantum > 0 ? Math.max(1, Math.round(this.quantum / b.width)) : Math.max(1, Math.ceil(b.n / DEFAULT_QUANTA));
    const q = per * b.width;
    this.quantumNs = q;
    const N = this.m.N, load = new Float64Array(N);
    for (let i0 = 0, qi = 0; i0 < b.n; i0 += per, qi++) {
      load.fill(0);
      let max = 0;
      for (let n = 0; n < N; n++) {
        const a = b.perNode[n]!;
        for (let i = i0; i < Math.min(i0 + per, b.n, a.length); i++) load[n] += a[i]!;
        if (load[n]! > max) max = load[n]!;
      }
      let any = false;
      const site = this.out.site(`quantum ${qi} [${fmtMs(qi * q)}, ${fmtMs((qi + 1) * q)})`);
      for (let n = 0; n < N; n++) {
        const w = max - load[n]!;
        if (w > 0) { this.out.add(P.imbalance_in_quantum, site, n, w); any = true; }
      }
      if (any) this.out.occurred(P.imbalance_in_quantum);
    }
  }
}

const fmtMs = (ns: number): string => `${+(ns / 1e6).toFixed(3)} ms`;
