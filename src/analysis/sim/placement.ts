// The simulator's replay of a traced fragment graph under a placement: the execution model of
// simulate.ts (N nodes × T worker lanes; a CF becomes ready when its inputs are on its node; a
// DF reaches another node after a transfer) with the traced durations and the measured
// transfer costs instead of random ones. It predicts what a distribution would do — the end of
// the run and each node's busy time — as Charm++'s +LBSim does for a balancing step.

/** A fragment graph with measured costs (columns; CF i's inputs in CSR form). */
export interface ReplayGraph {
  n: number;
  /** execution time of each CF, ns */
  duration: ArrayLike<number>;
  /** earliest start of each CF (its creation, for CFs fed by no other CF), ns */
  release: ArrayLike<number>;
  /** CF i reads DFs dep[depStart[i] .. depStart[i+1]) written by depFrom[…] */
  depStart: ArrayLike<number>;
  depFrom: ArrayLike<number>;
  depDf: ArrayLike<number>;
  /** size of each DF, bytes */
  dfBytes: ArrayLike<number>;
}

export interface ReplayOptions {
  nodes: number;
  /** worker lanes per node */
  lanes: number;
  /** node of each CF */
  node: ArrayLike<number>;
  /** node that keeps each DF (-1: the node of its writer) */
  dfOwner: ArrayLike<number>;
  /** time one DF of `bytes` takes from one node to another, ns */
  transferNs(bytes: number): number;
}

export interface ReplayResult {
  /** end of the last CF, ns */
  makespan: number;
  /** busy time of each node's lanes, ns */
  busy: Float64Array;
  /** predicted execution interval of each CF */
  start: Float64Array;
  finish: Float64Array;
  /** bytes that crossed between nodes */
  bytesMoved: number;
}

/** Replay `g` under the placement of `o`: event by event, ready CFs in the order they became ready. */
export function replayGraph(g: ReplayGraph, o: ReplayOptions): ReplayResult {
  const n = g.n, N = o.nodes, node = o.node;
  // consumers of each CF (reverse of the CSR), to wake them when it finishes
  const outStart = new Int32Array(n + 1);
  for (let k = 0; k < g.depStart[n]!; k++) outStart[g.depFrom[k]! + 1]++;
  for (let i = 0; i < n; i++) outStart[i + 1] += outStart[i]!;
  const outDep = new Int32Array(g.depStart[n]!);
  const fill = outStart.slice(0, n);
  for (let c = 0; c < n; c++) for (let k = g.depStart[c]!; k < g.depStart[c + 1]!; k++) outDep[fill[g.depFrom[k]!]!++] = k;
  const consumerOf = new Int32Array(g.depStart[n]!);
  for (let c = 0; c < n; c++) for (let k = g.depStart[c]!; k < g.depStart[c + 1]!; k++) consumerOf[k] = c;

  const pending = new Int32Array(n), readyAt = new Float64Array(n);
  for (let c = 0; c < n; c++) { pending[c] = g.depStart[c + 1]! - g.depStart[c]!; readyAt[c] = g.release[c]!; }
  const start = new Float64Array(n), finish = new Float64Array(n), busy = new Float64Array(N);
  const free = new Int32Array(N).fill(o.lanes);
  const queues = Array.from({ length: N }, () => new TimeHeap());
  const events = new TimeHeap(); // ready events (id ≥ 0) and finishes (id < 0: −1 − cf)
  for (let c = 0; c < n; c++) if (pending[c] === 0) events.push(readyAt[c]!, c);
  let bytesMoved = 0, makespan = 0;
  const dispatch = (m: number, now: number): void => {
    const q = queues[m]!;
    while (free[m]! > 0 && q.size > 0) {
      const c = q.pop();
      free[m]--;
      start[c] = now;
      finish[c] = now + g.duration[c]!;
      busy[m] += g.duration[c]!;
      events.push(finish[c]!, -1 - c);
    }
  };
  while (events.size > 0) {
    const now = events.topTime(), id = events.pop();
    if (id >= 0) { const m = node[id]!; queues[m]!.push(now, id); dispatch(m, now); continue; }
    const p = -1 - id, m = node[p]!;
    if (finish[p]! > makespan) makespan = finish[p]!;
    free[m]++;
    for (let x = outStart[p]!; x < outStart[p + 1]!; x++) {
      const k = outDep[x]!, c = consumerOf[k]!, d = g.depDf[k]!;
      // the writer posts to the DF's owner; a reader elsewhere gets it from there
      const owner = o.dfOwner[d]! < 0 ? m : o.dfOwner[d]!;
      const at = node[c]!;
      const hops = (owner !== m ? 1 : 0) + (at !== owner ? 1 : 0);
      const t = finish[p]! + (hops > 0 ? hops * o.transferNs(g.dfBytes[d]!) : 0);
      if (hops > 0) bytesMoved += hops * g.dfBytes[d]!;
      if (t > readyAt[c]!) readyAt[c] = t;
      if (--pending[c] === 0) events.push(readyAt[c]!, c);
    }
    dispatch(m, now);
  }
  return { makespan, busy, start, finish, bytesMoved };
}

/** A binary min-heap of ids by time, ties by id (the traced order): typed arrays, no object per entry. */
class TimeHeap {
  private t = new Float64Array(64);
  private id = new Int32Array(64);
  size = 0;

  push(time: number, id: number): void {
    if (this.size === this.t.length) {
      const t = new Float64Array(this.size * 2), d = new Int32Array(this.size * 2);
      t.set(this.t); d.set(this.id);
      this.t = t; this.id = d;
    }
    const T = this.t, D = this.id;
    let i = this.size++;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!less(time, id, T[p]!, D[p]!)) break;
      T[i] = T[p]!; D[i] = D[p]!;
      i = p;
    }
    T[i] = time; D[i] = id;
  }

  topTime(): number { return this.t[0]!; }

  pop(): number {
    const T = this.t, D = this.id;
    const top = D[0]!;
    const last = --this.size;
    const time = T[last]!, id = D[last]!;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= last) break;
      const m = l + 1 < last && less(T[l + 1]!, D[l + 1]!, T[l]!, D[l]!) ? l + 1 : l;
      if (!less(T[m]!, D[m]!, time, id)) break;
      T[i] = T[m]!; D[i] = D[m]!;
      i = m;
    }
    T[i] = time; D[i] = id;
    return top;
  }
}

function less(t1: number, i1: number, t2: number, i2: number): boolean {
  return t1 < t2 || (t1 === t2 && i1 < i2);
}
