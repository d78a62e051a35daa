// A discrete-event simulator of the LuNA execution model (seed 000 §3.1): N nodes × T worker
// threads, CFs that become ready when their input DFs are present on their node, system delays
// (finish → computed, computed → sent, ready → start), transfer latencies (direct or through an
// intermediate node), and pre-emption of running CFs by system threads. It emits the TraceEvents
// a real run would record and, independently of the analyzer, the S/L/O/W/U it injected: each
// worker's idle interval is cut at the causes the simulator itself created (last producer finish,
// the first-hop send of the last input to arrive, its arrival, the start). Threads may also wait
// for resources (wait records): inside a CF (part of it spun, on the CPU clock) and outside any
// CF, as an SPMD rank at a barrier would; all of such a wait is W.

import type { TraceEvent } from '../../trace/schema.js';
import type { SiteInfo, TraceManifest } from '../../trace/manifest.js';
import { VERSION as TRACE_FORMAT_VERSION } from '../../trace/format.js';
import { indexKey, familyKey } from '../../core/dfkey.js';
import type { Slou } from '../slow/types.js';
import { Heap } from './heap.js';
import { Prng } from './prng.js';
import { randomProgram, type ProgramOptions, type SimCf } from './program.js';

export interface SimOptions extends ProgramOptions {
  threads?: number;
  /** inclusive ranges (ns) of the injected delays */
  postDelay?: [number, number];
  sendDelay?: [number, number];
  latency?: [number, number];
  startDelay?: [number, number];
  rootDelay?: [number, number];
  endDelay?: [number, number];
  /** probability that a transfer goes through an intermediate node (needs ≥ 3 nodes) */
  hopProb?: number;
  /** probability that a CF waits for a resource inside its execution, and how long (ns) */
  waitProb?: number;
  wait?: [number, number];
  /** fraction of an inside wait spent spinning (on the thread's CPU clock, recorded in the wait) */
  spin?: number;
  /** probability that a thread, freed by a CF, waits outside any CF before it takes the next */
  outsideWaitProb?: number;
}

export interface SimTruth extends Slou { tWall: number; tTotal: number; perNode: Slou[]; perThread: Slou[] }
export interface SimResult { manifest: TraceManifest; events: TraceEvent[]; truth: SimTruth; program: SimCf[] }

type Ev = { t: number; seq: number; kind: 'eligible' | 'finish' | 'free'; cf: number };
type Avail = { g: number; c: number };

const zero = (): Slou => ({ S: 0, L: 0, O: 0, W: 0, U: 0 });

/** The part of [x, y) inside the waits [a, b) of `ws` (pairs). */
function overlap(ws: readonly number[], x: number, y: number): number {
  let n = 0;
  for (let i = 0; i < ws.length; i += 2) n += Math.max(0, Math.min(y, ws[i + 1]!) - Math.max(x, ws[i]!));
  return n;
}

export function simulate(o: SimOptions): SimResult {
  const N = o.nodes ?? 2, T = o.threads ?? 2;
  const prog = randomProgram({ ...o, nodes: N });
  const rng = new Prng(o.seed * 104729 + 3);
  const r = (range: [number, number] | undefined, def: [number, number]) => { const [lo, hi] = range ?? def; return rng.int(lo, hi); };

  const out: { e: TraceEvent; seq: number }[] = [];
  let seq = 0;
  const emit = (e: TraceEvent) => out.push({ e, seq: seq++ });

  // node-local numbering of CFs and DFs, as a runtime would assign them
  const nextCf = new Array<number>(N).fill(1), nextDf = new Array<number>(N).fill(1);
  const dfLocal = new Map<number, number>(); // df·N + node → local number
  const localDf = (df: number, node: number, t: number): number => {
    let l = dfLocal.get(df * N + node);
    if (l === undefined) {
      l = nextDf[node]++;
      dfLocal.set(df * N + node, l);
      emit({ kind: 'dfName', t, node, thread: 0, df: l, name: indexKey(familyKey(`d${prog[df].code}`, ''), df) });
    }
    return l;
  };
  const cfLocal = new Array<number>(prog.length).fill(-1);
  // one spawn site per (code, label) pair of the program, as a compiler would number them
  const sites: SiteInfo[] = [];
  const siteIds = new Map<string, number>();
  const siteOf = (c: SimCf): number => {
    const k = `${c.code}:${c.label}`;
    let id = siteIds.get(k);
    if (id === undefined) {
      id = sites.length;
      siteIds.set(k, id);
      sites.push({ label: c.label, code: c.code, kind: 'call', file: `sim-${o.seed}.fa`, line: id + 1, col: 5, spawnNo: id });
    }
    return id;
  };

  // state
  const consumers: number[][] = prog.map(() => []);
  for (const c of prog) for (const p of c.inputs) consumers[p].push(c.id);
  const pending = prog.map((c) => c.inputs.length);
  const best: Avail[] = prog.map(() => ({ g: -Infinity, c: -Infinity }));
  const finish = new Array<number>(prog.length).fill(NaN);
  const avail = new Map<number, Avail>(); // df·N + node
  const uses = new Map<number, { left: number; last: number }>();
  const threadOf = new Array<number>(prog.length).fill(-1);
  const free: number[][] = Array.from({ length: N }, () => new Array<number>(T).fill(1)); // 1 = free
  const lastFinish = new Float64Array(N * T);
  const cpu = new Float64Array(N * T);
  const ready: { e: number; id: number }[][] = Array.from({ length: N }, () => []);
  /** per lane slot: its waits outside any CF, [start, end) pairs */
  const outside: number[][] = Array.from({ length: N * T }, () => []);
  /** per CF: the time it waits inside, and the part of it spun */
  const waitIn = new Float64Array(prog.length), spinIn = new Float64Array(prog.length);
  const q = new Heap<Ev>();
  let qseq = 0;

  const truth: SimTruth = { ...zero(), tWall: 0, tTotal: 0, perNode: Array.from({ length: N }, zero), perThread: Array.from({ length: N * T }, zero) };
  const charge = (slot: number, f: keyof Slou, ns: number) => {
    truth[f] += ns; truth.perNode[Math.floor(slot / T)][f] += ns; truth.perThread[slot][f] += ns;
  };

  const useUp = (df: number, node: number, t: number) => {
    const u = uses.get(df * N + node)!;
    u.left--; if (t > u.last) u.last = t;
    if (u.left === 0) emit({ kind: 'dfDeleted', t: u.last, node, thread: 0, df: dfLocal.get(df * N + node)! });
  };

  const makeReady = (id: number, R: number) => {
    const c = prog[id];
    let home = c.node;
    if (c.migrates && c.node !== 0) home = 0;
    const l0 = nextCf[home]++;
    emit({ kind: 'cfCreated', t: R, node: home, thread: 0, cf: l0, parentCf: 0, site: siteOf(c), gid: `g${id}`, labelIdx: [id] });
    let l = l0;
    if (home !== c.node) {
      emit({ kind: 'cfMigrate', t: R, node: home, thread: 0, cf: l0, toNode: c.node });
      l = nextCf[c.node]++;
      emit({ kind: 'cfReceive', t: R, node: c.node, thread: 0, cf: l, fromNode: home, remoteCf: l0, site: siteOf(c), gid: `g${id}`, labelIdx: [id] });
    }
    cfLocal[id] = l;
    emit({ kind: 'cfReady', t: R, node: c.node, thread: 0, cf: l });
    const E = R + r(o.startDelay, [0, 3000]);
    if (E > R) emit({ kind: 'sysBusy', t: R, node: c.node, thread: 0, end: E });
    q.push({ t: E, seq: qseq++, kind: 'eligible', cf: id });
  };

  const start = (id: number, node: number, th: number, D: number) => {
    const c = prog[id], slot = node * T + th;
    free[node][th] = 0;
    threadOf[id] = slot;
    for (const p of c.inputs) emit({ kind: 'cfInput', t: D, node, thread: th + 1, cf: cfLocal[id], df: dfLocal.get(p * N + node)! });
    emit({ kind: 'cfStart', t: D, node, thread: th + 1, cpu: cpu[slot], cf: cfLocal[id], lane: th + 1 });
    // the injected causes of the idle interval [A, D)
    const A = lastFinish[slot];
    let B = -Infinity;
    for (const p of c.inputs) if (finish[p] > B) B = finish[p];
    const b = Math.max(A, B), cc = Math.max(b, best[id].c), g = Math.max(b, best[id].g);
    // the thread's waits outside any CF in [A, D) are W, taken from the part they fall in
    const ws = outside[slot];
    const wS = overlap(ws, A, b), wO1 = overlap(ws, b, cc), wL = overlap(ws, cc, g), wO2 = overlap(ws, g, D);
    charge(slot, 'S', b - A - wS); charge(slot, 'O', cc - b - wO1); charge(slot, 'L', g - cc - wL); charge(slot, 'O', D - g - wO2);
    charge(slot, 'W', wS + wO1 + wL + wO2);
    charge(slot, 'U', c.work); charge(slot, 'O', c.preempt);
    if (c.preempt > 0) emit({ kind: 'sysBusy', t: D, node, thread: 0, end: D + c.preempt });
    if (o.waitProb && rng.chance(o.waitProb)) {
      const w = r(o.wait, [1000, 30000]), at = D + rng.int(0, c.work);
      waitIn[id] = w;
      spinIn[id] = Math.round(w * (o.spin ?? 0));
      charge(slot, 'W', w);
      emit({ kind: 'wait', t: at, node, thread: th + 1, end: at + w, cpu: spinIn[id], cf: cfLocal[id], rank: -1, waitKind: 6, resource: `r${id % 3}` });
    }
    q.push({ t: D + c.work + c.preempt + waitIn[id], seq: qseq++, kind: 'finish', cf: id });
  };

  const dispatch = (node: number, now: number) => {
    const rq = ready[node];
    while (rq.length > 0) {
      const th = free[node].indexOf(1);
      if (th < 0) return;
      const { id } = rq.shift()!;
      start(id, node, th, now);
    }
  };

  const arrive = (df: number, node: number, g: number, c: number) => {
    avail.set(df * N + node, { g, c });
    uses.set(df * N + node, { left: consumers[df].filter((k) => prog[k].node === node).length, last: g });
  };

  const onFinish = (id: number, t: number) => {
    const c = prog[id], slot = threadOf[id], node = c.node;
    cpu[slot] += c.work + spinIn[id];
    emit({ kind: 'cfFinish', t, node, thread: (slot % T) + 1, cpu: cpu[slot], cf: cfLocal[id], lane: (slot % T) + 1 });
    finish[id] = t;
    lastFinish[slot] = t;
    if (o.outsideWaitProb && rng.chance(o.outsideWaitProb)) {
      // the thread waits (as a rank at a barrier) before it takes another CF
      const x = t + rng.int(0, 2000), y = x + r(o.wait, [1000, 30000]);
      outside[slot].push(x, y);
      emit({ kind: 'wait', t: x, node, thread: (slot % T) + 1, end: y, cpu: 0, cf: -1, rank: slot, waitKind: 3, resource: `b${slot % 2}` });
      q.push({ t: y, seq: qseq++, kind: 'free', cf: slot });
    } else free[node][slot % T] = 1;
    // the output DF: computed, then shipped to every other node that consumes it
    const tc = t + r(o.postDelay, [0, 2000]);
    if (tc > t) emit({ kind: 'sysBusy', t, node, thread: 0, end: tc });
    const ld = localDf(id, node, tc);
    emit({ kind: 'dfComputed', t: tc, node, thread: 0, df: ld, producerCf: cfLocal[id], bytes: c.bytes });
    const dests = [...new Set(consumers[id].map((k) => prog[k].node))].filter((n) => n !== node);
    arrive(id, node, tc, tc);
    const own = uses.get(id * N + node)!;
    own.left += dests.length;
    if (own.left === 0) { own.left = 1; useUp(id, node, tc); } // nobody reads it
    const holding = new Set<number>([node, ...dests]);
    let sentAt = 0; // end of the last send: the sender may delete its copy only after it
    const send = (from: number, to: number, ts: number): number => {
      const lat = r(o.latency, [500, 20000]);
      emit({ kind: 'dfSendStart', t: ts, node: from, thread: 0, df: dfLocal.get(id * N + from)!, toNode: to, bytes: c.bytes });
      emit({ kind: 'dfSendEnd', t: ts + (lat >> 1), node: from, thread: 0, df: dfLocal.get(id * N + from)!, toNode: to });
      const g = ts + lat;
      sentAt = ts + (lat >> 1);
      emit({ kind: 'dfReceive', t: g, node: to, thread: 0, df: localDf(id, to, g), fromNode: from, bytes: c.bytes });
      return g;
    };
    for (const n of dests) {
      const c1 = tc + r(o.sendDelay, [0, 5000]);
      if (c1 > tc) emit({ kind: 'sysBusy', t: tc, node, thread: 0, end: c1 });
      const hops = N >= 3 && rng.chance(o.hopProb ?? 0.2) ? [...Array(N).keys()].filter((h) => !holding.has(h)) : [];
      if (hops.length > 0) {
        const h = rng.pick(hops);
        holding.add(h);
        const gh = send(node, h, c1);
        arrive(id, h, gh, c1);
        uses.get(id * N + h)!.left = 1;
        const c2 = gh + r(o.sendDelay, [0, 5000]);
        const firstEnd = sentAt;
        const g = send(h, n, c2);
        useUp(id, h, sentAt);
        arrive(id, n, g, c1);
        useUp(id, node, firstEnd);
      } else {
        arrive(id, n, send(node, n, c1), c1);
        useUp(id, node, sentAt);
      }
    }
    for (const k of consumers[id]) {
      const a = avail.get(id * N + prog[k].node)!;
      const bk = best[k];
      if (a.g > bk.g || (a.g === bk.g && a.c > bk.c)) { bk.g = a.g; bk.c = a.c; }
      if (--pending[k] === 0) makeReady(k, bk.g);
    }
    for (const p of c.inputs) useUp(p, node, t);
  };

  for (let n = 0; n < N; n++) emit({ kind: 'programStart', t: 0, node: n, thread: 0 });
  for (const c of prog) if (c.inputs.length === 0) makeReady(c.id, r(o.rootDelay, [0, 5000]));
  let tLast = 0;
  for (let ev = q.pop(); ev; ev = q.pop()) {
    tLast = Math.max(tLast, ev.t);
    if (ev.kind === 'free') {
      const node = Math.floor(ev.cf / T);
      free[node][ev.cf % T] = 1;
      dispatch(node, ev.t);
      continue;
    }
    const node = prog[ev.cf].node;
    if (ev.kind === 'eligible') {
      ready[node].push({ e: ev.t, id: ev.cf });
      dispatch(node, ev.t);
    } else {
      onFinish(ev.cf, ev.t);
      dispatch(node, ev.t);
    }
  }
  let tEnd = tLast;
  for (const x of out) if (x.e.t > tEnd) tEnd = x.e.t;
  tEnd += r(o.endDelay, [0, 10000]);
  for (let n = 0; n < N; n++) emit({ kind: 'programFinish', t: tEnd, node: n, thread: 0, status: 1 });
  for (let s = 0; s < N * T; s++) {
    const w = overlap(outside[s], lastFinish[s], tEnd);
    charge(s, 'S', tEnd - lastFinish[s] - w);
    charge(s, 'W', w);
  }
  truth.tWall = tEnd;
  truth.tTotal = tEnd * N * T;

  out.sort((a, b) => a.e.t - b.e.t || a.seq - b.seq);
  const manifest: TraceManifest = {
    format: 'luna-ts-trace', version: TRACE_FORMAT_VERSION, program: `sim-${o.seed}`, args: [], nodes: N, threads: T,
    codes: Array.from({ length: o.codes ?? 4 }, (_, i) => `code${i}`), sites, status: 'completed',
    clock: { cpuExact: true, offsets: new Array<number>(N).fill(0) },
    startedAt: new Date(0).toISOString(), versions: { lunaTs: 'sim', node: process.version }, files: [],
  };
  return { manifest, events: out.map((x) => x.e), truth, program: prog };
}
