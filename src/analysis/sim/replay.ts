// The replay of a traced fragment graph: list scheduling on N nodes × T worker lanes with the
// measured costs (a CF becomes ready when its inputs are on its node; ready CFs wait for a free
// lane of their node). One mechanism, and the questions that differ between its users are hooks
// of a policy: which node runs a CF, how long an input takes from its writer's node to its
// reader's, and in which order a node takes its ready CFs.
//   - the advice of `luna analyze slow` (run-graph.ts) keeps every CF on its node and asks what
//     another order (critical path first) or another thread count would change;
//   - the balancer (placement.ts) asks what another placement of CFs and DFs would change, as
//     Charm++'s +LBSim does for a balancing step.
// Both sides of a comparison go through the same model, so its simplifications (no runtime
// delays, no contention) cancel out in the ratio.

/** A fragment graph with measured costs (columns; CF i's inputs in CSR form). */
export interface ReplayGraph {
  n: number;
  /** execution time of each CF, ns */
  duration: ArrayLike<number>;
  /** earliest start of each CF (its creation), ns */
  release: ArrayLike<number>;
  /** CF i reads inputs k in [depStart[i], depStart[i+1]), written by CF depFrom[k] */
  depStart: ArrayLike<number>;
  depFrom: ArrayLike<number>;
}

/** A replay graph with the DFs its inputs read and their sizes (placements and transfers). */
export interface PlacementGraph extends ReplayGraph {
  /** DF of input k */
  depDf: ArrayLike<number>;
  /** size of each DF, bytes */
  dfBytes: ArrayLike<number>;
  /** node that spawns each CF (a CF placed elsewhere is shipped; host.ts charges the message) */
  spawn?: ArrayLike<number>;
}

/** What a replay's user decides; everything else is the mechanism's. */
export interface ReplayPolicy {
  nodes: number;
  /** worker lanes per node */
  lanes: number;
  /** node of each CF */
  node: ArrayLike<number>;
  /** ns from the writer's finish until input k is on its reader's node (writer on `from`, reader on `to`) */
  arrival(k: number, from: number, to: number): number;
  /**
   * The same as data, for the balancer's rule (placement.ts): input k takes `hopNs[k]` per hop,
   * writer → owner → reader, each where they differ (`owner[df[k]]`, -1: the writer's node).
   * When given, the replay computes it in its loop instead of calling `arrival` per input (a
   * call per input it did not inline: ~5 % of a step at 10^6 CFs).
   */
  hops?: { hopNs: ArrayLike<number>; df: ArrayLike<number>; owner: ArrayLike<number> };
  /** the order a node takes its ready CFs in: the smallest key first, ties by CF number (default: the time it became ready) */
  priority?(cf: number, readyAt: number): number;
}

export interface ReplayResult {
  /** end of the last CF, ns (on the graph's clock: releases count from its origin) */
  makespan: number;
  /** earliest release, ns (makespan − first: the replayed run's length) */
  first: number;
  /** busy time of each node's lanes, ns */
  busy: Float64Array;
  /** predicted execution interval of each CF */
  start: Float64Array;
  finish: Float64Array;
}

/**
 * Replay `g` under policy `o`, event by event. Everything that happens at one instant (CFs
 * finishing, inputs arriving, CFs becoming ready) is in before a node chooses among its ready
 * CFs, so the order the events were popped in does not choose for it.
 *
 * Without a priority a node takes its ready CFs in the order (time ready, CF number): each
 * instant's newly ready CFs, sorted by number, go to the back of a FIFO per node (a linked list
 * in typed arrays) instead of a heap — the same order at a third of the cost on 10^6 CFs, where
 * the balancer replays a graph many times.
 */
export function replayGraph(g: ReplayGraph, o: ReplayPolicy, consumers: Consumers = consumersOf(g), scratch?: ReplayScratch): ReplayResult {
  const n = g.n, N = o.nodes, node = o.node, prio = o.priority, arrival = o.arrival, duration = g.duration;
  const hopNs = o.hops?.hopNs, hopDf = o.hops?.df, hopOwner = o.hops?.owner;
  const { outStart, outDep, consumerOf } = consumers;

  // per-CF state every CF's entry of which is written before it is read: reusable between replays
  const pending = scratch?.pending.length === n ? scratch.pending : new Int32Array(n), readyAt = scratch?.readyAt.length === n ? scratch.readyAt : new Float64Array(n);
  const start = new Float64Array(n), finish = new Float64Array(n), busy = new Float64Array(N);
  const free = new Int32Array(N).fill(o.lanes);
  // ready CFs per node: a heap by priority, or a FIFO (head, tail, next; -1: none)
  const queues = prio ? Array.from({ length: N }, () => new TimeHeap()) : undefined;
  const head = new Int32Array(N).fill(-1), tail = new Int32Array(N).fill(-1), next = prio ? undefined : scratch?.next.length === n ? scratch.next : new Int32Array(n);
  const events = new TimeHeap(); // ready events (id ≥ 0) and finishes (id < 0: −1 − cf)
  let first = n > 0 ? Infinity : 0;
  const depStart = g.depStart, release = g.release;
  for (let c = 0; c < n; c++) {
    const k = depStart[c + 1]! - depStart[c]!, r = release[c]!;
    pending[c] = k;
    readyAt[c] = r;
    if (r < first) first = r;
    if (k === 0) events.push(r, c);
  }
  let makespan = first;
  const touched = new Uint8Array(N), touchedList = new Int32Array(N);
  let nTouched = 0;
  // the instant's newly ready CFs (FIFO mode), and whether they came in increasing order
  let batch = new Int32Array(64), nBatch = 0, sorted = true;
  while (events.size > 0) {
    const now = events.topTime();
    while (events.size > 0 && events.topTime() === now) {
      const id = events.pop();
      if (id >= 0) {
        const m = node[id]!;
        if (!touched[m]) { touched[m] = 1; touchedList[nTouched++] = m; }
        if (queues) { queues[m]!.push(prio!(id, now), id); continue; }
        if (nBatch === batch.length) { const b = new Int32Array(2 * nBatch); b.set(batch); batch = b; }
        if (nBatch > 0 && batch[nBatch - 1]! > id) sorted = false;
        batch[nBatch++] = id;
        continue;
      }
      const p = -1 - id, m = node[p]!, f = finish[p]!;
      if (f > makespan) makespan = f;
      free[m]++;
      if (!touched[m]) { touched[m] = 1; touchedList[nTouched++] = m; }
      for (let x = outStart[p]!, xEnd = outStart[p + 1]!; x < xEnd; x++) {
        const k = outDep[x]!, c = consumerOf[k]!;
        let t: number;
        if (hopNs) {
          const to = node[c]!, ow = hopOwner![hopDf![k]!]!, owner = ow < 0 ? m : ow;
          const h = (owner !== m ? 1 : 0) + (to !== owner ? 1 : 0);
          t = f + (h > 0 ? h * hopNs[k]! : 0);
        } else t = f + arrival(k, m, node[c]!);
        let r = readyAt[c]!;
        if (t > r) readyAt[c] = r = t;
        const left = pending[c]! - 1;
        pending[c] = left;
        if (left !== 0) continue;
        // ready at this instant (FIFO mode): straight into the instant's batch, as its event would
        if (!queues && r === now) {
          const mc = node[c]!;
          if (!touched[mc]) { touched[mc] = 1; touchedList[nTouched++] = mc; }
          if (nBatch === batch.length) { const b = new Int32Array(2 * nBatch); b.set(batch); batch = b; }
          if (nBatch > 0 && batch[nBatch - 1]! > c) sorted = false;
          batch[nBatch++] = c;
        } else events.push(r, c);
      }
    }
    if (nBatch > 0) {
      if (!sorted) batch.subarray(0, nBatch).sort();
      for (let i = 0; i < nBatch; i++) {
        const c = batch[i]!, m = node[c]!;
        next![c] = -1;
        if (tail[m]! < 0) head[m] = c; else next![tail[m]!] = c;
        tail[m] = c;
      }
      nBatch = 0; sorted = true;
    }
    for (let i = 0; i < nTouched; i++) {
      const m = touchedList[i]!;
      touched[m] = 0;
      while (free[m]! > 0) {
        let c: number;
        if (queues) { const q = queues[m]!; if (q.size === 0) break; c = q.pop(); } else {
          c = head[m]!;
          if (c < 0) break;
          head[m] = next![c]!;
          if (head[m]! < 0) tail[m] = -1;
        }
        free[m]--;
        start[c] = now;
        const d = duration[c]!;
        finish[c] = now + d;
        busy[m] += d;
        events.push(now + d, -1 - c);
      }
    }
    nTouched = 0;
  }
  return { makespan, first, busy, start, finish };
}

/** Per-CF arrays a user that replays one graph many times passes to each replay (10^6 CFs: 16 MB less garbage a replay). */
export interface ReplayScratch { pending: Int32Array; readyAt: Float64Array; next: Int32Array }

export function replayScratch(n: number): ReplayScratch {
  return { pending: new Int32Array(n), readyAt: new Float64Array(n), next: new Int32Array(n) };
}

/**
 * The consumers of each CF (the reverse of the CSR), to wake them when it finishes: the inputs
 * k it feeds are outDep[outStart[i] .. outStart[i+1]), read by CF consumerOf[k]. A user that
 * replays one graph many times (the balancer) builds it once and passes it to each replay.
 */
export interface Consumers { outStart: Int32Array; outDep: Int32Array; consumerOf: Int32Array }

export function consumersOf(g: ReplayGraph): Consumers {
  const n = g.n, edges = n > 0 ? g.depStart[n]! : 0;
  const outStart = new Int32Array(n + 1);
  for (let k = 0; k < edges; k++) outStart[g.depFrom[k]! + 1]++;
  for (let i = 0; i < n; i++) outStart[i + 1] += outStart[i]!;
  const outDep = new Int32Array(edges), consumerOf = new Int32Array(edges);
  const fill = outStart.slice(0, n);
  for (let c = 0; c < n; c++) {
    for (let k = g.depStart[c]!; k < g.depStart[c + 1]!; k++) { outDep[fill[g.depFrom[k]!]!++] = k; consumerOf[k] = c; }
  }
  return { outStart, outDep, consumerOf };
}

/** A binary min-heap of ids by key, ties by id (the traced order): typed arrays, no object per entry. */
export class TimeHeap {
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
