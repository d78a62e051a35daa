// The dynamic array: local add/remove against a plain typed array doing the same (a count and a
// Float64Array), and the rearrangement against the raw transport carrying the same bytes,
// swept over the fraction f of elements that move (as Cabana's benchmark does). Both on
// 2 in-process nodes over the in-memory mesh (the router and control protocol are real).
// Alternated and repeated; medians. `node dist/bench/dda.js [--quick]` runs it alone.
import { MemoryMesh } from '../src/runtime/transport/memory.js';
import { Router } from '../src/runtime/transport/router.js';
import { Control } from '../src/runtime/cluster/control.js';
import { DdaNode } from '../src/runtime/dda/layer.js';
import { DdaBlock } from '../src/ucode/dda.js';
import { median } from './median.js';

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

interface Pair { nodes: DdaNode[]; raw: ((bytes: Uint8Array) => Promise<void>); close(): Promise<void> }

/** Two nodes with the array layer, and a raw channel of the same mesh for the baseline. */
function pair(): Pair {
  const mesh = new MemoryMesh(2);
  let busy = true;
  let arrived: (() => void) | null = null;
  const controls: Control[] = [];
  const nodes = mesh.endpoints.map((tp) => {
    const router = new Router(tp);
    const control = new Control(router, now);
    controls.push(control);
    control.register({ name: 'bench', idle: () => !busy, live: () => (busy ? 1 : 0), waits: () => [], hangSummary: (n) => `${n}` });
    const raw = router.channel(60, 'raw', () => { arrived?.(); }, { counted: () => true });
    const d = new DdaNode(router, control, { now });
    (d as unknown as { raw: typeof raw }).raw = raw;
    return d;
  });
  const ch = (nodes[0] as unknown as { raw: { send(to: number, tag: number, b: Uint8Array, p?: Uint8Array): void } }).raw;
  return {
    nodes,
    raw: (bytes) => new Promise<void>((res) => { arrived = res; ch.send(1, 1, new Uint8Array(1), bytes); }),
    close: async () => { busy = false; for (const c of controls) c.wake(); await Promise.all(controls.map((c) => c.done)); for (const tp of mesh.endpoints) await tp.close(); },
  };
}

const reply = (res: (v: unknown) => void) => ({ answer: (v?: unknown) => res(v), fail: (m: string) => { throw new Error(m); } });

/** ms to rearrange N elements split so that f·N move from node 0 to node 1, and to send those bytes raw. */
async function rearrangeVsRaw(p: Pair, n: number, f: number): Promise<{ dda: number; raw: number }> {
  const [a, b] = p.nodes as [DdaNode, DdaNode];
  const name = `X${Math.random()}`;
  for (const d of p.nodes) d.declare({ name, elsize: ELSIZE, capacity: 0, order: 'unordered', home: 0 });
  const move = Math.round(f * n);
  a.block(name).append(new Uint8Array((n / 2 + move) * ELSIZE));
  b.block(name).append(new Uint8Array((n / 2 - move) * ELSIZE));
  const t0 = performance.now();
  await new Promise((res) => a.global(name, { kind: 'rearrange', nodes: [0, 1] }, 1, 'bench', reply(res)));
  const dda = performance.now() - t0;
  if (b.block(name).getNumel() !== n / 2) throw new Error('the rearrangement did not balance');
  const bytes = new Uint8Array(move * ELSIZE);
  const t1 = performance.now();
  await p.raw(bytes);
  return { dda, raw: performance.now() - t1 };
}

/** ms of a rearrangement over 2 nodes of `n` elements that moves `move` (0: the plan moves nothing): the fixed cost. */
async function rearrangeFixed(p: Pair, n: number, move: number): Promise<number> {
  const [a, b] = p.nodes as [DdaNode, DdaNode];
  const name = `F${Math.random()}`;
  for (const d of p.nodes) d.declare({ name, elsize: ELSIZE, capacity: 0, order: 'unordered', home: 0 });
  a.block(name).append(new Uint8Array((n / 2 + move) * ELSIZE));
  b.block(name).append(new Uint8Array((n / 2 - move) * ELSIZE));
  const t0 = performance.now();
  await new Promise((res) => a.global(name, { kind: 'rearrange', nodes: [0, 1] }, 1, 'bench', reply(res)));
  return performance.now() - t0;
}

export async function run(quick = process.argv.includes('--quick')): Promise<Record<string, number>> {
  const reps = quick ? 3 : 9;
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
  const p = pair();
  try {
    const N = quick ? 100_000 : 1_000_000;
    // the fixed cost: the protocol's rounds alone (nothing moves), and with one element moving
    const z: number[] = [], one: number[] = [];
    for (let r = 0; r < reps + 1; r++) {
      const x = await rearrangeFixed(p, 1000, 0), y = await rearrangeFixed(p, 1000, 1);
      if (r > 0) { z.push(x); one.push(y); }
    }
    out.rearrange_nothingMoves_ms = median(z);
    out.rearrange_oneElement_ms = median(one);
    for (const f of [0.01, 0.05, 0.1, 0.5]) {
      const d: number[] = [], w: number[] = [];
      for (let r = 0; r < reps + 1; r++) {
        const x = await rearrangeVsRaw(p, N, f);
        if (r > 0) { d.push(x.dda); w.push(x.raw); }
      }
      const key = `f${String(f).replace('.', '_')}`;
      out[`rearrange_${key}_ms`] = median(d);
      out[`raw_${key}_ms`] = median(w);
      out[`rearrangeVsRaw_${key}`] = median(d) / median(w);
    }
  } finally { await p.close(); }
  return out;
}

if (process.argv[1]?.endsWith('/dda.js') && process.argv[1].includes('bench')) {
  const r = await run();
  for (const [k, v] of Object.entries(r)) console.log(`${k.padEnd(32)} ${v.toFixed(3)}`);
}
