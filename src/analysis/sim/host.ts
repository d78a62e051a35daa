// The replay of a placement on hosts whose cores its nodes share, with the costs of a transfer
// between processes on the CPUs that pay them (placement.ts without a host model: each node has
// its own cores, and a transfer is only a delay).
//
// Why: nodes started by one launcher on one machine (`luna run --nodes 2` on 2 cores) share its
// cores; each node's system thread serializes, sends, receives and deserializes every DF that
// crosses between processes, and that CPU time is taken from the workers. A placement that moves
// 235 MB across processes (test_3 balanced on 2 local nodes) was predicted 1.32× faster by a model
// that saw only a delay per transfer, and ran slower. Here:
//   - every thread of a host (worker lanes running CFs, system threads running transfer work)
//     shares the host's cores by processor sharing: with k runnable threads on C cores each runs
//     at min(1, C / k) of a core;
//   - a hop costs its sender's system thread `msgNs + bytes · byteNs`, then `wireNs` on the
//     wire, then the same on its receiver's system thread; each system thread does one job at a
//     time, in the order they came;
//   - a CF costs its node's system thread `cfNs` before it may start (dispatch), paid when a lane
//     of its node is free to take it: a lane waits for the dispatch of its next CF (the gap
//     between one CF's end and the next one's start on a lane of a real run), and a system thread
//     busy with transfers delays it;
//   - a DF crosses to a reading node once: the node keeps a copy for its later readers (the
//     runtime's remote copies), which wait for that crossing or read the copy;
//   - a CF placed away from the node that spawns it (PlacementGraph.spawn) is shipped there: a
//     message (`msgNs` on each side, `wireNs` between) before it is released on its node;
//   - cores that slow each other (`contention`): while more than one core of a host is busy, its
//     threads' work stretches (2 cores: by the factor; C cores: linearly in the busy cores beyond
//     one), and the CPU time a CF uses with it (`cpu`, what the next run measures).
import { consumersOf, TimeHeap, type Consumers, type PlacementGraph } from './replay.js';

/** The machine a placement runs on, and what the system threads pay. */
export interface HostModel {
  /** host of each node */
  hostOf: ArrayLike<number>;
  /** cores of each host (Infinity: as many as its threads) */
  cores: ArrayLike<number>;
  /** system-thread CPU per message, on each side, ns */
  msgNs: number;
  /** system-thread CPU per byte, on each side, ns */
  byteNs: number;
  /** time on the wire between the two system threads, ns */
  wireNs: number;
  /** system-thread CPU per CF dispatched, ns */
  cfNs: number;
  /**
   * CPU time a host's work takes with all its cores busy over the time it takes alone (absent or
   * 1: cores that do not slow each other). The 2-vCPU machine here: 1.316 (comm.ts
   * DEFAULT_CONTENTION).
   */
  contention?: number;
  /**
   * The share of a core each node's threads get when the model gives them a whole one (absent:
   * 1): what the machine's other work and the run's threads the model does not hold (main
   * threads, GC) leave them. Every job of node m — its CFs and its system thread's — takes its
   * CPU time over capacity[m] of wall time more; the CPU time it uses is unchanged.
   */
  capacity?: ArrayLike<number>;
}

export interface HostReplayOptions {
  nodes: number;
  lanes: number;
  node: ArrayLike<number>;
  /** node that keeps each DF (-1: its writer's) */
  dfOwner: ArrayLike<number>;
  host: HostModel;
}

export interface HostReplayResult {
  makespan: number;
  first: number;
  /** worker CPU time of each node's CFs, ns */
  busy: Float64Array;
  /** system-thread CPU time of each node, ns */
  sysBusy: Float64Array;
  /** CPU time of each CF with the contention it met (its duration without contention) */
  cpu: Float64Array;
  start: Float64Array;
  finish: Float64Array;
  bytesMoved: number;
}

/** crossHead of a (DF, node) whose copy is there */
const ARRIVED = -1;
// system-thread tasks: dispatch of a CF, one side of a hop of input k, or one side of shipping CF c
const DISPATCH = 0, SEND = 1, RECV = 2, SHIP = 3, LAND = 4;

/** Replay `g` under placement `o` on the hosts of `o.host`. */
export function replayOnHosts(g: PlacementGraph, o: HostReplayOptions, consumers: Consumers = consumersOf(g)): HostReplayResult {
  const n = g.n, N = o.nodes, H = o.host, node = o.node;
  const { outStart, outDep, consumerOf } = consumers;

  const hosts = Math.max(1, ...Array.from({ length: N }, (_, m) => H.hostOf[m]! + 1));
  // processor sharing per host: every running job advances its host's virtual time at one rate
  // (vt: work done; ct: CPU time used — they differ by the contention of busy cores)
  const vt = new Float64Array(hosts), ct = new Float64Array(hosts), lastT = new Float64Array(hosts), running = new Int32Array(hosts);
  const runHeap = Array.from({ length: hosts }, () => new TimeHeap());
  const share = (h: number): number => (running[h]! <= H.cores[h]! ? 1 : H.cores[h]! / running[h]!);
  const stretch = (h: number): number => {
    const f = H.contention ?? 1, C = H.cores[h]!;
    if (f === 1 || !(C > 1) || !Number.isFinite(C) || running[h]! < 2) return 1;
    return 1 + ((f - 1) * (Math.min(C, running[h]!) - 1)) / (C - 1);
  };
  // each host's share and rate, functions of its running jobs alone: kept as that count changes
  const shareOf = new Float64Array(hosts).fill(1), rateOf = new Float64Array(hosts).fill(1);
  const setRunning = (h: number, r: number): void => {
    running[h] = r;
    shareOf[h] = share(h); rateOf[h] = share(h) / stretch(h);
  };
  const advance = (h: number, now: number): void => {
    if (running[h]! > 0) { const dt = now - lastT[h]!; vt[h] += dt * rateOf[h]!; ct[h] += dt * shareOf[h]!; }
    lastT[h] = now;
  };
  // jobs: CF c is job c; system task s is job n + s. Tasks in typed columns that grow, each
  // node's queue of them a FIFO list (qHead, qTail, taskNext; -1: none) — no object per task
  let cap0 = 16 + 2 * n;
  let taskKind = new Uint8Array(cap0), taskArg = new Int32Array(cap0), taskNode = new Int32Array(cap0), taskBytes = new Float64Array(cap0), taskHop = new Int32Array(cap0), taskNext = new Int32Array(cap0);
  let tasks = 0;
  const qHead = new Int32Array(N).fill(-1), qTail = new Int32Array(N).fill(-1), sysIdle = new Uint8Array(N).fill(1);
  const free = new Int32Array(N).fill(o.lanes);
  const ready = Array.from({ length: N }, () => new TimeHeap());
  const pending = new Int32Array(n);
  const start = new Float64Array(n), finish = new Float64Array(n), busy = new Float64Array(N), sysBusy = new Float64Array(N), cpu = new Float64Array(n);
  const timed = new TimeHeap(); // timed events: release of CF c (id c), arrival of a hop on the wire (id n + task)
  let first = n > 0 ? Infinity : 0, makespan = 0, bytesMoved = 0;
  /** the instant being handled (a CF made ready now queues at it) */
  let clock = 0;

  const cap = H.capacity;
  const startJob = (job: number, m: number, work: number, now: number): void => {
    const h = H.hostOf[m]!;
    advance(h, now);
    setRunning(h, running[h]! + 1);
    runHeap[h]!.push(vt[h]! + (cap ? work / cap[m]! : work), job);
  };
  const grow = (): void => {
    cap0 *= 2;
    const k0 = new Uint8Array(cap0), a0 = new Int32Array(cap0), n0 = new Int32Array(cap0), b0 = new Float64Array(cap0), h0 = new Int32Array(cap0), x0 = new Int32Array(cap0);
    k0.set(taskKind); a0.set(taskArg); n0.set(taskNode); b0.set(taskBytes); h0.set(taskHop); x0.set(taskNext);
    taskKind = k0; taskArg = a0; taskNode = n0; taskBytes = b0; taskHop = h0; taskNext = x0;
  };
  const task = (kind: number, arg: number, m: number, bytes: number, hop: number): void => {
    if (tasks === cap0) grow();
    const s = tasks++;
    taskKind[s] = kind; taskArg[s] = arg; taskNode[s] = m; taskBytes[s] = bytes; taskHop[s] = hop; taskNext[s] = -1;
    if (qTail[m]! < 0) qHead[m] = s; else taskNext[qTail[m]!] = s;
    qTail[m] = s;
  };
  // the nodes woken at this instant, each once (a second wake-up of a node in one instant finds
  // nothing more to start: its system thread busy or its queue empty)
  const touched = new Int32Array(N), isTouched = new Uint8Array(N);
  let nTouched = 0;
  const wake = (m: number): void => { if (!isTouched[m]) { isTouched[m] = 1; touched[nTouched++] = m; } };
  // the hops of input k: writer → owner → reader (each where they differ), routeAt[3k ..] with
  // routeLen[k] nodes; written when its first hop is sent
  const deps = outDep.length, routeAt = new Int32Array(3 * deps), routeLen = new Uint8Array(deps);
  // per (DF, reading node) key: the inputs waiting for its crossing (a list: crossHead[key] − 1
  // first, waitNext[k] − 1 after k, 0: end), or ARRIVED once the node holds a copy
  const crossHead = new Int32Array(g.dfBytes.length * N), crossTail = new Int32Array(g.dfBytes.length * N), waitNext = new Int32Array(deps);
  // a free lane takes a ready CF, which its node's system thread dispatches to it
  const take = (m: number, c: number): void => { free[m]--; task(DISPATCH, c, m, 0, 0); wake(m); };
  const deliver = (c: number): void => {
    if (--pending[c] !== 0) return;
    const m = node[c]!;
    if (free[m]! > 0) take(m, c); else ready[m]!.push(clock, c);
  };
  const sendHop = (k: number, hop: number): void => {
    const b = g.dfBytes[g.depDf[k]!]!, from = routeAt[3 * k + hop]!;
    bytesMoved += b;
    task(SEND, k, from, b, hop);
    wake(from);
  };
  const spawn = g.spawn;
  /** CF c is released: on its node, or first shipped there from the node that spawned it */
  const release = (c: number): void => {
    const from = spawn ? spawn[c]! : -1;
    if (from >= 0 && from < N && from !== node[c]) { task(SHIP, c, from, 0, 0); wake(from); } else deliver(c);
  };
  for (let c = 0; c < n; c++) {
    pending[c] = g.depStart[c + 1]! - g.depStart[c]! + 1; // + 1: its release
    if (g.release[c]! < first) first = g.release[c]!;
    timed.push(g.release[c]!, c);
  }
  const finishJob = (job: number, now: number): void => {
    if (job < n) {
      const c = job, m = node[c]!;
      // CPU used: the CPU clock's advance over its run, or its work when nothing stretched it
      const used = (ct[H.hostOf[m]!]! - cpu[c]!) * (cap ? cap[m]! : 1);
      cpu[c] = Math.abs(used - g.duration[c]!) <= 1e-9 * Math.max(1, used) ? g.duration[c]! : used;
      busy[m] += cpu[c]!;
      finish[c] = now; free[m]++; wake(m);
      if (ready[m]!.size > 0) take(m, ready[m]!.pop());
      if (now > makespan) makespan = now;
      for (let x = outStart[c]!; x < outStart[c + 1]!; x++) {
        const k = outDep[x]!, reader = consumerOf[k]!, to = node[reader]!;
        const d = g.depDf[k]!, ow = o.dfOwner[d]!, owner = ow < 0 ? m : ow;
        if (owner === m && to === owner) { deliver(reader); continue; }
        // one crossing per DF and reading node: later readers wait for it, or read the copy
        const key = d * N + to, w = crossHead[key]!;
        if (w === ARRIVED) { deliver(reader); continue; }
        if (w > 0) { waitNext[crossTail[key]!] = k + 1; crossTail[key] = k; continue; }
        crossHead[key] = k + 1; crossTail[key] = k; waitNext[k] = 0;
        let len = 0;
        routeAt[3 * k + len++] = m;
        if (owner !== m) routeAt[3 * k + len++] = owner;
        if (to !== owner) routeAt[3 * k + len++] = to;
        routeLen[k] = len;
        sendHop(k, 0);
      }
      return;
    }
    const s = job - n, m = taskNode[s]!;
    sysIdle[m] = 1; wake(m);
    if (now > makespan) makespan = now;
    const kind = taskKind[s]!, arg = taskArg[s]!;
    if (kind === DISPATCH) { start[arg] = now; startJob(arg, m, g.duration[arg]!, now); cpu[arg] = ct[H.hostOf[m]!]!; return; }
    if (kind === SEND || kind === SHIP) { timed.push(now + H.wireNs, n + s); return; }
    if (kind === LAND) { deliver(arg); return; }
    // RECV: the hop's receiver has it; the reader's node ends the route, else the next hop
    const hop = taskHop[s]! + 1;
    if (hop === routeLen[arg]! - 1) {
      // the copy is here: every reader of this node waiting for it, and any later one, has it
      const key = g.depDf[arg]! * N + node[consumerOf[arg]!]!;
      for (let k = crossHead[key]! - 1; k >= 0; k = waitNext[k]! - 1) deliver(consumerOf[k]!);
      crossHead[key] = ARRIVED;
    } else sendHop(arg, hop);
  };

  for (;;) {
    // the next instant: a timed event or the first job to finish on some host
    let now = timed.size > 0 ? timed.topTime() : Infinity;
    clock = now;
    for (let h = 0; h < hosts; h++) {
      if (running[h]! === 0) continue;
      const t = lastT[h]! + (runHeap[h]!.topTime() - vt[h]!) / rateOf[h]!;
      if (t < now) now = t;
    }
    if (now === Infinity) break;
    clock = now;
    for (let h = 0; h < hosts; h++) {
      if (running[h]! === 0) continue;
      advance(h, now);
      // jobs within a rounding error of the instant finish in it
      while (running[h]! > 0 && runHeap[h]!.topTime() <= vt[h]! + 1e-6 * Math.max(1, Math.abs(vt[h]!))) {
        const job = runHeap[h]!.pop();
        setRunning(h, running[h]! - 1);
        finishJob(job, now);
      }
    }
    while (timed.size > 0 && timed.topTime() <= now) {
      const id = timed.pop();
      if (id < n) { release(id); continue; }
      const s = id - n;
      if (taskKind[s] === SHIP) { const c = taskArg[s]!; task(LAND, c, node[c]!, 0, 0); wake(node[c]!); continue; }
      const k = taskArg[s]!, to = routeAt[3 * k + taskHop[s]! + 1]!;
      task(RECV, k, to, taskBytes[s]!, taskHop[s]!);
      wake(to);
    }
    for (let i = 0; i < nTouched; i++) {
      const m = touched[i]!;
      isTouched[m] = 0;
      while (sysIdle[m] && qHead[m]! >= 0) {
        const s = qHead[m]!;
        qHead[m] = taskNext[s]!;
        if (qHead[m]! < 0) qTail[m] = -1;
        const work = taskKind[s] === DISPATCH ? H.cfNs : H.msgNs + taskBytes[s]! * H.byteNs;
        sysIdle[m] = 0; sysBusy[m] += work;
        startJob(n + s, m, work, now);
      }
    }
    nTouched = 0;
  }
  return { makespan: Math.max(makespan, first), first, busy, sysBusy, cpu, start, finish, bytesMoved };
}
