// The dynamic array: local add/remove against a plain typed array doing the same (a count and a
// Float64Array), and the rearrangement against the raw transport carrying the same bytes,
// swept over the fraction f of elements that move (as Cabana's benchmark does), on 2 node
// processes over the real transport (`procs_` figures: the target's) and on 2 in-process nodes
// over the in-memory mesh (the router and control protocol are real, but the raw transport there
// is one memory copy, which the receiver's append of the parts and the protocol's turns match:
// a figure of the protocol's own cost, not the target's); and the overlap of
// several blocks a node: compute on a worker thread over each block of the receiving node as it
// arrives, against one block a node, the same bytes (`overlap_`). Alternated and repeated;
// medians. `node dist/bench/dda.js [--quick] [--reps N] [--overlap]` runs it alone (--overlap: those rows only).
import { MemoryMesh } from '../src/runtime/transport/memory.js';
import { Router } from '../src/runtime/transport/router.js';
import { Control } from '../src/runtime/cluster/control.js';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { loadavg } from 'node:os';
import { DdaNode, type GlobalOp } from '../src/runtime/dda/layer.js';
import { startNode } from '../src/runtime/launch/cluster.js';
import { keepFreedMemory, sharedBytes } from '../src/runtime/exec/shm.js';
import { DdaBlock } from '../src/ucode/dda.js';
import { median } from './median.js';

const SELF = fileURLToPath(import.meta.url);
const ELSIZE = 32; // a particle: position and velocity, 4 doubles
const now = (): number => performance.now() * 1e6;

/** ns per element: add n elements one at a time, mark every 10th, defragment. */
function ddaAddRemove(n: number, order: 'ordered' | 'unordered'): number {
  const b = DdaBlock.create(ELSIZE, n, order);
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const v = b.addElement(1)!;
    const f = new Float64Array(v.buffer, v.byteOffset, 4);
    f[0] = i; f[1] = i; f[2] = i; f[3] = i;
  }
  for (let i = 0; i < n; i += 10) b.remElement(i);
  b.defragment();
  return ((performance.now() - t0) * 1e6) / n;
}

/** ns per element: add n elements at once (addElement(n) and one typed view), mark every 10th, defragment. */
function ddaBulk(n: number): number {
  const b = DdaBlock.create(ELSIZE, n, 'unordered');
  const t0 = performance.now();
  const v = b.addElement(n)!;
  const f = new Float64Array(v.buffer, v.byteOffset, 4 * n);
  for (let i = 0; i < n; i++) { const o = i * 4; f[o] = i; f[o + 1] = i; f[o + 2] = i; f[o + 3] = i; }
  for (let i = 0; i < n; i += 10) b.remElement(i);
  b.defragment();
  return ((performance.now() - t0) * 1e6) / n;
}

/** The same by hand: a Float64Array and a count; holes filled from the tail. */
function plainAddRemove(n: number): number {
  const a = new Float64Array(n * 4);
  const t0 = performance.now();
  let k = 0;
  for (let i = 0; i < n; i++) { const o = k++ * 4; a[o] = i; a[o + 1] = i; a[o + 2] = i; a[o + 3] = i; }
  for (let i = Math.floor((n - 1) / 10) * 10; i >= 0; i -= 10) { k--; if (i < k) a.copyWithin(i * 4, k * 4, k * 4 + 4); }
  return ((performance.now() - t0) * 1e6) / n;
}

/**
 * Two nodes with the array layer and a raw channel beside it for the baseline: in one process
 * over the in-memory mesh, or two processes over the real transport (the peer runs this file
 * with --peer). Node 0 drives: its DdaNode holds the array's GD and asks for the operations.
 */
interface Pair {
  /** node 0's layer */
  node: DdaNode;
  /** node 1 (another process) computes over each block of array O<k> as it arrives in the next rearrangement; resolves when done */
  computeAtPeer?: (k: number, passes: number) => Promise<void>;
  /** node 1's layer, when it is in this process */
  peer?: DdaNode;
  /** run a global operation from node 0; its moved elements */
  global(name: string, op: Omit<GlobalOp, 'from' | 'token'>): Promise<number>;
  /** send `bytes` to node 1 on the raw channel; resolves when node 1 acknowledges them */
  raw(bytes: Uint8Array): Promise<void>;
  close(): Promise<void>;
}

const RAW_CHANNEL = 60, RAW_BYTES = 1, RAW_ACK = 2, RAW_QUIT = 3, RAW_OVERLAP = 4, RAW_COMPUTED = 5;

/** One node of a pair: its layer, a raw channel that acknowledges what it gets, and a participant busy until closed. */
function joinPair(router: Router): { dda: DdaNode; control: Control; raw: { send(to: number, tag: number, b: Uint8Array, p?: Uint8Array): void }; acked: { fn: (() => void) | null }; quit: () => void } {
  let busy = true;
  const control = new Control(router, now);
  control.register({ name: 'bench', idle: () => !busy, live: () => (busy ? 1 : 0), waits: () => [], hangSummary: (n) => `${n} bench waits` });
  const acked: { fn: (() => void) | null } = { fn: null };
  const quit = (): void => { busy = false; control.wake(); };
  let worker: Worker | null = null;
  const raw = router.channel(RAW_CHANNEL, 'raw', (from, tag, body) => {
    if (tag === RAW_BYTES) raw.send(from, RAW_ACK, new Uint8Array(1));
    else if (tag === RAW_ACK || tag === RAW_COMPUTED) acked.fn?.();
    else if (tag === RAW_QUIT) { void worker?.terminate(); quit(); }
    else if (tag === RAW_OVERLAP) {
      // the other node is about to ask for a rearrangement onto this one: compute over each block as it arrives
      const [k, passes] = [body[0]!, body[1]!];
      worker ??= new Worker(COMPUTE, { eval: true });
      void computeAsArrives(dda, worker, `O${k}`, k, passes).then(() => raw.send(from, RAW_COMPUTED, new Uint8Array(1)));
    }
  }, { counted: () => true });
  const dda = new DdaNode(router, control, { now });
  return { dda, control, raw, acked, quit };
}

function pairOf(n0: ReturnType<typeof joinPair>, closeRest: () => Promise<void>): Pair {
  const moved = new Map<string, (n: number) => void>();
  n0.dda.onDone = (d) => moved.get(d.array)?.(d.moves.reduce((k, m) => k + m.n, 0));
  return {
    node: n0.dda,
    global: (name, op) => new Promise<number>((res, rej) => {
      moved.set(name, res);
      n0.dda.global(name, op, 1, 'bench', { answer: () => {}, fail: (m: string) => rej(new Error(m)) });
    }),
    raw: (bytes) => new Promise<void>((res) => { n0.acked.fn = res; n0.raw.send(1, RAW_BYTES, new Uint8Array(1), bytes); }),
    computeAtPeer: (k, passes) => new Promise<void>((res) => { n0.acked.fn = res; n0.raw.send(1, RAW_OVERLAP, new Uint8Array([k, passes])); }),
    close: async () => {
      n0.raw.send(1, RAW_QUIT, new Uint8Array(0));
      n0.quit();
      await n0.control.done;
      await closeRest();
    },
  };
}

/** Two nodes in this process over the in-memory mesh. */
function inProcessPair(): Pair {
  const mesh = new MemoryMesh(2);
  const [n0, n1] = mesh.endpoints.map((tp) => joinPair(new Router(tp)));
  return { ...pairOf(n0!, async () => { await n1!.control.done; for (const tp of mesh.endpoints) await tp.close(); }), peer: n1!.dda };
}

/** Two node processes over the real transport (a Unix socket on one machine), received into shared memory as `luna run` does. */
async function processPair(): Promise<Pair> {
  keepFreedMemory();
  const { transport, children } = await startNode({ nodes: 2, argv: [SELF, '--peer'], allocPayload: sharedBytes });
  return pairOf(joinPair(new Router(transport)), async () => { await children!.exited(); await transport.close(); });
}

/** The peer process of processPair. */
async function peer(): Promise<void> {
  keepFreedMemory();
  const { transport } = await startNode({ allocPayload: sharedBytes });
  const n1 = joinPair(new Router(transport));
  await n1.control.done;
  await transport.close();
  process.exit(0);
}

/**
 * ms to rearrange N elements of which f·N sit on node 0 above its share and move to node 1,
 * and ms to send those bytes raw, alternated `reps` times after a warm-up. Steady state, as in
 * an application's steps: one array, skewed again before each timed rearrangement by a
 * weighted one (untimed), so the blocks' memory is the one the last step used.
 */
async function rearrangeVsRaw(p: Pair, n: number, f: number, reps: number): Promise<{ dda: number; raw: number }> {
  const name = `X${n}_${f}`;
  p.node.declare({ name, elsize: ELSIZE, capacity: 0, order: 'unordered', home: 0 });
  p.node.block(name).append(new Uint8Array(n * ELSIZE));
  const move = Math.round(f * n), half = n / 2;
  const bytes = new Uint8Array(move * ELSIZE).fill(7);
  const d: number[] = [], w: number[] = [];
  for (let r = 0; r < reps + 1; r++) {
    await p.global(name, move === half ? { kind: 'rearrange', nodes: [0] } : { kind: 'rearrange', nodes: [0, 1], weights: [half + move, half - move] });
    const t0 = performance.now();
    const moved = await p.global(name, { kind: 'rearrange', nodes: [0, 1] });
    const t1 = performance.now();
    if (moved !== move) throw new Error(`the rearrangement moved ${moved} elements, not ${move}`);
    await p.raw(bytes);
    const t2 = performance.now();
    if (r > 0) { d.push(t1 - t0); w.push(t2 - t1); }
  }
  return { dda: median(d), raw: median(w) };
}

/** ms of a rearrangement over 2 nodes of `n` elements that moves `move` (0: the plan moves nothing): the fixed cost. */
async function rearrangeFixed(p: Pair, n: number, move: number, reps: number): Promise<number> {
  const name = `F${move}`;
  p.node.declare({ name, elsize: ELSIZE, capacity: 0, order: 'unordered', home: 0 });
  p.node.block(name).append(new Uint8Array(n * ELSIZE));
  const t: number[] = [];
  await p.global(name, { kind: 'rearrange', nodes: [0, 1] });
  for (let r = 0; r < reps + 1; r++) {
    if (move > 0) await p.global(name, { kind: 'rearrange', nodes: [0, 1], weights: [n / 2 + move, n / 2 - move] });
    const t0 = performance.now();
    await p.global(name, { kind: 'rearrange', nodes: [0, 1] });
    if (r > 0) t.push(performance.now() - t0);
  }
  return median(t);
}

/** The rearrangement figures of one pair, keys prefixed by `pre`. */
async function rearrangement(p: Pair, out: Record<string, number>, pre: string, n: number, fs: number[], reps: number): Promise<void> {
  out[`${pre}rearrange_nothingMoves_ms`] = await rearrangeFixed(p, 1000, 0, reps);
  out[`${pre}rearrange_oneElement_ms`] = await rearrangeFixed(p, 1000, 1, reps);
  for (const f of fs) {
    const x = await rearrangeVsRaw(p, n, f, reps);
    const key = `f${String(f).replace('.', '_')}`;
    out[`${pre}rearrange_${key}_ms`] = x.dda;
    out[`${pre}raw_${key}_ms`] = x.raw;
    out[`${pre}rearrangeVsRaw_${key}`] = x.dda / x.raw;
  }
}

/**
 * A CF's work on a block, on a worker thread as CFs run: `passes` sweeps over its elements (4
 * doubles each, a leapfrog-like update). The thread that receives the parts is free meanwhile.
 */
const COMPUTE = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', ({ buffer, numel, passes }) => {
  const f = new Float64Array(buffer, 0, numel * 4);
  for (let p = 0; p < passes; p++) for (let i = 0; i < f.length; i += 4) { f[i + 2] += 1e-3 * f[i]; f[i] += 1e-3 * f[i + 2]; }
  parentPort.postMessage(numel);
});`;

/**
 * ms from asking a rearrangement that moves all `n` elements from node 0 to node 1 to the end of
 * a worker's compute over every element on node 1 (each block taken as soon as it is free, in
 * turn, as a node's one worker would), with `k` blocks a node. With one block the compute starts
 * at the rearrangement's end; with several it starts on the first block to arrive while the
 * others still travel. The array is brought back onto node 0 between rounds (untimed).
 */
/** everything onto node 1, the GD staying on node 0 (where the bench asks): node 0's share rounds to none */
const ALL_TO_1: Omit<GlobalOp, 'from' | 'token'> = { kind: 'rearrange', nodes: [0, 1], weights: [1, 1e12] };

async function overlapRound(p: Pair, w: Worker, name: string, n: number, k: number, passes: number): Promise<number> {
  await p.global(name, { kind: 'rearrange', nodes: [0] });
  if (p.peer === undefined) {
    // node 1 is another process: it is told first (the link keeps the order), then the rearrangement is asked
    const t0 = performance.now();
    const computed = p.computeAtPeer!(k, passes);
    const [moved] = await Promise.all([p.global(name, ALL_TO_1), computed]);
    if (moved !== n) throw new Error(`the rearrangement moved ${moved} elements, not ${n}`);
    return performance.now() - t0;
  }
  const t0 = performance.now();
  const computed = computeAsArrives(p.peer, w, name, k, passes);
  const [moved] = await Promise.all([p.global(name, ALL_TO_1), computed]);
  if (moved !== n) throw new Error(`the rearrangement moved ${moved} elements, not ${n}`);
  return performance.now() - t0;
}

/**
 * On node 1, before a rearrangement onto it is asked: once the node is locked (it reported),
 * take each of its `k` blocks of `name` as soon as it is granted — when its parts are in — and
 * let the worker compute over it, one block at a time (a node's one worker); resolves when every
 * block is computed and released.
 */
async function computeAsArrives(n1: DdaNode, w: Worker, name: string, k: number, passes: number): Promise<void> {
  const reported = n1.sent.report;
  while (n1.sent.report === reported) await new Promise((r) => setImmediate(r));
  const queue: { j: number; cf: number; buffer: SharedArrayBuffer; numel: number; size: number }[] = [];
  let busy = false, left = k;
  await new Promise<void>((done) => {
    const next = (): void => {
      const b = queue.shift();
      if (b === undefined) { busy = false; return; }
      busy = true;
      w.once('message', () => {
        n1.release(name, b.cf, undefined, b.numel, b.size, undefined, b.j);
        if (--left === 0) done(); else next();
      });
      w.postMessage({ buffer: b.buffer, numel: b.numel, passes });
    };
    for (let j = 0; j < k; j++) {
      n1.acquire(name, 100 + j, `bench CF ${j}`, {
        answer: (v) => { const g = v as { buffer: SharedArrayBuffer; numel: number; size: number }; queue.push({ j, cf: 100 + j, ...g }); if (!busy) next(); },
        fail: (m) => { throw new Error(m); },
      }, j);
    }
  });
}

/** The overlap rows: the same elements in 1 block a node and in `k`, alternated; medians; and the parts alone (no compute, compute alone). */
async function overlap(p: Pair, out: Record<string, number>, pre: string, n: number, ks: number[], passes: number, reps: number): Promise<void> {
  const w = new Worker(COMPUTE, { eval: true });
  try {
    const names = new Map<number, string>();
    for (const k of [1, ...ks]) {
      const name = `O${k}`;
      names.set(k, name);
      p.node.declare({ name, elsize: ELSIZE, capacity: 0, order: 'unordered', home: 0, blocks: k });
      p.node.block(name).append(new Uint8Array(n * ELSIZE));
    }
    const t = new Map<number, number[]>([...names.keys()].map((k) => [k, []]));
    const loads: number[] = [];
    for (let r = 0; r < reps + 1; r++) {
      for (const k of names.keys()) { const ms = await overlapRound(p, w, names.get(k)!, n, k, passes); if (r > 0) t.get(k)!.push(ms); }
      loads.push(loadavg()[0]!);
    }
    // the two halves alone: the rearrangement without compute, the compute without migration
    const mig: number[] = [], comp: number[] = [];
    const buf = new SharedArrayBuffer(n * ELSIZE);
    for (let r = 0; r < reps; r++) {
      await p.global(names.get(1)!, { kind: 'rearrange', nodes: [0] });
      const t0 = performance.now();
      await p.global(names.get(1)!, ALL_TO_1);
      mig.push(performance.now() - t0);
      const t1 = performance.now();
      await new Promise<void>((res) => { w.once('message', () => res()); w.postMessage({ buffer: buf, numel: n, passes }); });
      comp.push(performance.now() - t1);
    }
    out[`${pre}overlap_migrationOnly_ms`] = median(mig);
    out[`${pre}overlap_computeOnly_ms`] = median(comp);
    out[`${pre}overlap_1block_ms`] = median(t.get(1)!);
    for (const k of ks) {
      out[`${pre}overlap_${k}blocks_ms`] = median(t.get(k)!);
      out[`${pre}overlap_${k}blocksVs1`] = median(t.get(k)!) / median(t.get(1)!);
    }
    out[`${pre}overlap_load1`] = median(loads);
  } finally { await w.terminate(); }
}

export async function run(quick = process.argv.includes('--quick')): Promise<Record<string, number>> {
  const at = process.argv.indexOf('--reps');
  const reps = at > 0 && Number(process.argv[at + 1]) > 0 ? Number(process.argv[at + 1]) : quick ? 3 : 9;
  const n = quick ? 100_000 : 1_000_000;
  const out: Record<string, number> = {};
  // --overlap: the overlap rows alone
  if (process.argv.includes('--overlap')) {
    const p = inProcessPair();
    try { await overlap(p, out, '', quick ? 1 << 17 : 1 << 20, [4, 16], 8, reps); } finally { await p.close(); }
    const q = await processPair();
    try { await overlap(q, out, 'procs_', quick ? 1 << 17 : 1 << 20, [4, 16], 8, reps); } finally { await q.close(); }
    return out;
  }
  const add: Record<string, number[]> = { plain: [], unordered: [], ordered: [], bulk: [] };
  for (let r = 0; r < reps + 1; r++) {
    // alternated; the first round warms up
    const x = { plain: plainAddRemove(n), unordered: ddaAddRemove(n, 'unordered'), ordered: ddaAddRemove(n, 'ordered'), bulk: ddaBulk(n) };
    if (r > 0) for (const k of Object.keys(x) as (keyof typeof x)[]) add[k]!.push(x[k]);
  }
  out.addRemovePlainNsPerEl = median(add.plain!);
  out.addRemoveUnorderedNsPerEl = median(add.unordered!);
  out.addRemoveOrderedNsPerEl = median(add.ordered!);
  out.addRemoveBulkNsPerEl = median(add.bulk!);
  out.addRemoveUnorderedVsPlain = out.addRemoveUnorderedNsPerEl / out.addRemovePlainNsPerEl;
  out.addRemoveBulkVsPlain = out.addRemoveBulkNsPerEl / out.addRemovePlainNsPerEl;
  const N = quick ? 100_000 : 1_000_000;
  const p = inProcessPair();
  try {
    await rearrangement(p, out, '', N, [0.01, 0.05, 0.1, 0.5], reps);
    // compute on arrived blocks overlapping the migration of the rest: 2^20 elements (32 MiB) a round
    await overlap(p, out, '', quick ? 1 << 17 : 1 << 20, [4, 16], 8, reps);
  } finally { await p.close(); }
  // two node processes: the figure the target is about (in one process the mesh copies each
  // payload once, a socket carries it through the kernel)
  const q = await processPair();
  try {
    await rearrangement(q, out, 'procs_', N, [0.01, 0.05, 0.1, 0.5], reps);
    await overlap(q, out, 'procs_', quick ? 1 << 17 : 1 << 20, [4, 16], 8, reps);
  } finally { await q.close(); }
  return out;
}

if (process.argv[1]?.endsWith('/dda.js') && process.argv[1].includes('bench') && process.argv.includes('--peer')) await peer();
else if (process.argv[1]?.endsWith('/dda.js') && process.argv[1].includes('bench')) {
  const r = await run();
  for (const [k, v] of Object.entries(r)) console.log(`${k.padEnd(32)} ${v.toFixed(3)}`);
}
