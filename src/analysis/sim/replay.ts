// Replays a run's execution graph on its nodes' worker threads under another scheduling order or
// another number of threads, to predict what an option would change before advice offers it:
// `--priorities-from` (ready CFs in critical-path order) against the run's own order (ready
// first, first run), `--threads k` against the threads it had. List scheduling with the run's
// measured times: each CF keeps its node, its wall time and its creation time; a remote input
// arrives after the latency its transfer had. Both sides of a comparison go through the same
// model, so its simplifications (no runtime delays, no contention) cancel out in the ratio.
import { Heap } from './heap.js';

/** Growable columns of a run's graph, in the order CFs finished (producers before consumers). */
export class RunGraph {
  n = 0;
  node = new Int32Array(1024);
  /** wall time on its lane, ns */
  dur = new Float64Array(1024);
  /** CPU time, ns (bottom levels, as --priorities-from computes them) */
  cpu = new Float64Array(1024);
  /** creation time: a CF cannot run before the program made it */
  release = new Float64Array(1024);
  /** inputs of CF i: inSrc/inLat[inOff[i] .. inOff[i + 1]) */
  inOff = new Int32Array(1025);
  inSrc = new Int32Array(1024);
  inLat = new Float32Array(1024);
  edges = 0;
  /** false once `limit` CFs were recorded: the graph is incomplete, nothing is predicted */
  whole = true;

  constructor(readonly nodes: number, readonly threads: number, readonly limit = 1 << 21) {}

  /** Adds a CF; returns its number (for its consumers' `inputs`), -1 past the limit. */
  add(node: number, dur: number, cpu: number, release: number, inputs: readonly number[], lats: readonly number[]): number {
    if (this.n >= this.limit) { this.whole = false; return -1; }
    if (this.n + 1 >= this.node.length) this.grow();
    const i = this.n++;
    this.node[i] = node; this.dur[i] = dur; this.cpu[i] = cpu; this.release[i] = release;
    for (let k = 0; k < inputs.length; k++) {
      if (inputs[k]! < 0) continue;
      if (this.edges >= this.inSrc.length) { this.inSrc = grown(this.inSrc); this.inLat = grown(this.inLat); }
      this.inSrc[this.edges] = inputs[k]!; this.inLat[this.edges] = lats[k]!; this.edges++;
    }
    this.inOff[i + 1] = this.edges;
    return i;
  }

  private grow(): void {
    this.node = grown(this.node); this.dur = grown(this.dur); this.cpu = grown(this.cpu); this.release = grown(this.release);
    const off = new Int32Array(this.node.length + 1); off.set(this.inOff); this.inOff = off;
  }
}

function grown<A extends Int32Array | Float64Array | Float32Array>(a: A): A {
  const b = new (a.constructor as new (n: number) => A)(a.length * 2);
  b.set(a);
  return b;
}

/** Bottom level of every CF: its CPU time plus the longest chain of CPU time among its consumers. */
export function bottomLevels(g: RunGraph): Float64Array {
  const bl = new Float64Array(g.n);
  for (let i = g.n - 1; i >= 0; i--) {
    bl[i] = bl[i]! + g.cpu[i]!;
    for (let e = g.inOff[i]!; e < g.inOff[i + 1]!; e++) { const p = g.inSrc[e]!; if (bl[i]! > bl[p]!) bl[p] = bl[i]!; }
  }
  return bl;
}

export type ReplayOrder = 'run' | 'critical';

interface Ev { t: number; seq: number; cf: number; kind: 0 | 1 } // 0: inputs present, 1: finished
interface Ready { t: number; seq: number; cf: number }

/**
 * The makespan (ns from the first release) of the graph on `threads` worker threads per node,
 * running ready CFs in the run's order (the earliest ready first) or in critical-path order.
 */
export function replay(g: RunGraph, order: ReplayOrder, threads = g.threads): number {
  const n = g.n;
  if (n === 0) return 0;
  const prio = order === 'critical' ? bottomLevels(g) : null;
  const consumers = new Int32Array(g.edges), cOff = new Int32Array(n + 1);
  for (let e = 0; e < g.edges; e++) cOff[g.inSrc[e]! + 1]++;
  for (let i = 0; i < n; i++) cOff[i + 1] += cOff[i]!;
  const cPos = cOff.slice(0, n), cLat = new Float32Array(g.edges);
  for (let i = 0; i < n; i++) for (let e = g.inOff[i]!; e < g.inOff[i + 1]!; e++) { const p = g.inSrc[e]!; consumers[cPos[p]!] = i; cLat[cPos[p]!++] = g.inLat[e]!; }
  const pending = new Int32Array(n), at = new Float64Array(n);
  let t0 = Infinity;
  for (let i = 0; i < n; i++) { pending[i] = g.inOff[i + 1]! - g.inOff[i]!; at[i] = g.release[i]!; if (g.release[i]! < t0) t0 = g.release[i]!; }
  const events = new Heap<Ev>();
  let seq = 0;
  for (let i = 0; i < n; i++) if (pending[i] === 0) events.push({ t: at[i]!, seq: seq++, cf: i, kind: 0 });
  // per node: ready CFs (critical: highest bottom level first, as a min-heap on its negation) and free lanes
  const ready = Array.from({ length: g.nodes }, () => new Heap<Ready>());
  const free = new Int32Array(g.nodes).fill(threads);
  let end = t0;
  const touched: number[] = [];
  const dispatch = (node: number, now: number): void => {
    const q = ready[node]!;
    while (free[node]! > 0 && q.size > 0) {
      const r = q.pop()!;
      free[node]--;
      const fin = now + g.dur[r.cf]!;
      if (fin > end) end = fin;
      events.push({ t: fin, seq: seq++, cf: r.cf, kind: 1 });
    }
  };
  for (let ev = events.pop(); ev; ev = events.pop()) {
    const node = g.node[ev.cf]!;
    if (touched.indexOf(node) < 0) touched.push(node);
    if (ev.kind === 0) {
      ready[node]!.push({ t: prio ? -prio[ev.cf]! : ev.t, seq: seq++, cf: ev.cf });
    } else {
      free[node]++;
      for (let k = cOff[ev.cf]!; k < cOff[ev.cf + 1]!; k++) {
        const c = consumers[k]!, arrive = ev.t + cLat[k]!;
        if (arrive > at[c]!) at[c] = arrive;
        if (--pending[c] === 0) events.push({ t: at[c]!, seq: seq++, cf: c, kind: 0 });
      }
    }
    // everything that happens at this instant is in before CFs are chosen
    if (events.peekTime() !== ev.t) { for (const nd of touched) dispatch(nd, ev.t); touched.length = 0; }
  }
  return end - t0;
}
