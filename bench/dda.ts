// The dynamic array: local add/remove against a plain typed array doing the same (a count and a
// Float64Array), and the rearrangement against the raw transport carrying the same bytes,
// swept over the fraction f of elements that move (as Cabana's benchmark does), on 2 in-process
// nodes over the in-memory mesh (the router and control protocol are real), and at f = 0.05 on
// 2 node processes over the real transport (`procs_` figures: the target's). Alternated and
// repeated; medians. `node dist/bench/dda.js [--quick] [--reps N]` runs it alone.
import { MemoryMesh } from '../src/runtime/transport/memory.js';
import { Router } from '../src/runtime/transport/router.js';
import { Control } from '../src/runtime/cluster/control.js';
import { fileURLToPath } from 'node:url';
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
  /** run a global operation from node 0; its moved elements */
  global(name: string, op: Omit<GlobalOp, 'from' | 'token'>): Promise<number>;
  /** send `bytes` to node 1 on the raw channel; resolves when node 1 acknowledges them */
  raw(bytes: Uint8Array): Promise<void>;
  close(): Promise<void>;
}

const RAW_CHANNEL = 60, RAW_BYTES = 1, RAW_ACK = 2, RAW_QUIT = 3;

/** One node of a pair: its layer, a raw channel that acknowledges what it gets, and a participant busy until closed. */
function joinPair(router: Router): { dda: DdaNode; control: Control; raw: { send(to: number, tag: number, b: Uint8Array, p?: Uint8Array): void }; acked: { fn: (() => void) | null }; quit: () => void } {
  let busy = true;
  const control = new Control(router, now);
  control.register({ name: 'bench', idle: () => !busy, live: () => (busy ? 1 : 0), waits: () => [], hangSummary: (n) => `${n} bench waits` });
  const acked: { fn: (() => void) | null } = { fn: null };
  const quit = (): void => { busy = false; control.wake(); };
  const raw = router.channel(RAW_CHANNEL, 'raw', (from, tag) => {
    if (tag === RAW_BYTES) raw.send(from, RAW_ACK, new Uint8Array(1));
    else if (tag === RAW_ACK) acked.fn?.();
    else if (tag === RAW_QUIT) quit();
  }, { counted: () => true });
  return { dda: new DdaNode(router, control, { now }), control, raw, acked, quit };
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
  return pairOf(n0!, async () => { await n1!.control.done; for (const tp of mesh.endpoints) await tp.close(); });
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

export async function run(quick = process.argv.includes('--quick')): Promise<Record<string, number>> {
  const at = process.argv.indexOf('--reps');
  const reps = at > 0 && Number(process.argv[at + 1]) > 0 ? Number(process.argv[at + 1]) : quick ? 3 : 9;
  const n = quick ? 100_000 : 1_000_000;
  const out: Record<string, number> = {};
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
  try { await rearrangement(p, out, '', N, [0.01, 0.05, 0.1, 0.5], reps); } finally { await p.close(); }
  // two node processes: the figure the target is about (in one process the mesh copies each
  // payload once, a socket carries it through the kernel)
  const q = await processPair();
  try { await rearrangement(q, out, 'procs_', N, [0.05], reps); } finally { await q.close(); }
  return out;
}

if (process.argv[1]?.endsWith('/dda.js') && process.argv[1].includes('bench') && process.argv.includes('--peer')) await peer();
else if (process.argv[1]?.endsWith('/dda.js') && process.argv[1].includes('bench')) {
  const r = await run();
  for (const [k, v] of Object.entries(r)) console.log(`${k.padEnd(32)} ${v.toFixed(3)}`);
}
