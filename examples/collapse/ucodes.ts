// Atomic code fragments of examples/collapse/collapse.fa: one dynamic array of particles over
// the nodes, pushed block by block each step; each step's statistics (particles and seconds per
// node) gathered into one value, which the next step waits for; every `every` steps the shares
// follow the nodes' measured throughput (`rearrange … @ { weights: W; }`).
import type { DF } from '../../src/ucode/df.js';
import type { DdaBlock } from '../../src/ucode/dda.js';
import { ELSIZE, WORDS, push, reference, slab } from './physics.js';

/** Node k's block gets slab k of the cloud along x (the ids sorted by x, cut in equal parts); made := [particles, 0, 0]. */
export function c_seed(P: DdaBlock, n: number, nodes: number, k: number, made: DF): void {
  if (P.getElsize() !== ELSIZE) throw new Error(`collapse: the array's elements are ${P.getElsize()} bytes, not ${ELSIZE}`);
  const mine = slab(n, nodes, k);
  // a few steps of a copy first: the first window's throughput then measures the physics, not the compiler
  const warm = mine.slice(0, Math.min(mine.length, 2000 * WORDS));
  for (let s = 0; s < 20; s++) push(warm, warm.length / WORDS);
  const count = mine.length / WORDS;
  if (P.getMaxNumel() - P.getNumel() < count) P.resize((P.getNumel() + count) * ELSIZE);
  const v = P.addElement(count)!;
  new Float64Array(v.buffer, v.byteOffset, count * WORDS).set(mine);
  made.setValue([count, 0, 0]);
}

/**
 * One step of this node's block. `go` is the last step's statistics (or the rearrangement's
 * total): the step waits for every node's last one. st := [particles, seconds, sub-steps].
 */
export function c_push(P: DdaBlock, go: DF, step: number, k: number, st: DF): void {
  const t0 = performance.now();
  const f = P.f64();
  byId(f, P.getNumel());
  const work = push(f, P.getNumel());
  st.setValue([P.getNumel(), (performance.now() - t0) / 1000, work]);
}

/**
 * Keeps the block in id order. Ids are spread over the cloud at random, so the tail a node gives
 * away in a rearrangement (a block's parts leave from its tail) is a fair sample of what it holds,
 * and the throughput it measured holds for what it keeps. What a rearrangement appends is merged
 * in here, once (a check of the order otherwise).
 */
function byId(f: Float64Array, count: number): void {
  let sorted = true;
  for (let i = 1; i < count && sorted; i++) sorted = f[(i - 1) * WORDS]! < f[i * WORDS]!;
  if (sorted) return;
  const order = Array.from({ length: count }, (_, i) => i).sort((a, b) => f[a * WORDS]! - f[b * WORDS]!);
  const copy = f.slice(0, count * WORDS);
  for (let i = 0; i < count; i++) f.set(copy.subarray(order[i]! * WORDS, (order[i]! + 1) * WORDS), i * WORDS);
}

/** The window's statistics: per node [particles, seconds, sub-steps], summed over its steps. */
type Stats = number[][];

/** Node 0's step starts a window (fresh, or after `w`, the window so far). */
export function c_open(nodes: number, st: DF, out: DF): void { out.setValue(add(Array.from({ length: nodes }, () => [0, 0, 0]), 0, st)); }
export function c_gather(w: DF, st: DF, k: number, out: DF): void { out.setValue(add(w.getValue() as Stats, k, st)); }

function add(w: Stats, k: number, st: DF): Stats {
  const s = st.getValue() as number[];
  return w.map((row, i) => (i === k ? row.map((x, j) => x + s[j]!) : row));
}

/**
 * W := each node's throughput over the window, particles per second (the nodes that cost more get
 * fewer), as shares, damped: half the node's present share, half its share of the throughput. The
 * particles' cost changes as they fall, and the parts that move take their cost with them, so the
 * full step overshoots (shares swinging from node to node on 3 nodes); half a step settles.
 */
export function c_weights(w: DF, W: DF): void {
  const rows = w.getValue() as Stats;
  const rate = rows.map(([n, secs]) => Math.max(n!, 1) / Math.max(secs!, 1e-6));
  const R = rate.reduce((a, b) => a + b, 0), N = rows.reduce((a, [n]) => a + n!, 0);
  W.setValue(rows.map(([n], k) => 0.5 * (n! / N) + 0.5 * (rate[k]! / R)));
}

/** The step's synchronisation value: the rearrangement's total or the window's statistics. */
export function c_pass(x: DF, out: DF): void { out.setValue(x.getValue()); }

/** Every particle once, on node 0; with `exact`, where the sequential reference puts it (within 1e-12). */
export function c_check(P: DdaBlock, back: DF, n: number, steps: number, nodes: number, weighted: number, exact: number): void {
  // the reference costs as much as the whole run on one core: without `exact`, ids only
  const ref = exact ? reference(n, steps) : undefined;
  const f = P.f64();
  const seen = new Uint8Array(n);
  const problems: string[] = [];
  let worst = 0;
  for (let i = 0; i < P.getNumel(); i++) {
    const id = f[i * WORDS]!;
    if (!Number.isInteger(id) || id < 0 || id >= n) { problems.push(`element ${i} has id ${id}`); continue; }
    if (seen[id]) problems.push(`particle ${id} twice`);
    seen[id] = 1;
    if (ref) for (let j = 1; j < 7; j++) worst = Math.max(worst, Math.abs(f[i * WORDS + j]! - ref[id * WORDS + j]!));
  }
  for (let id = 0; id < n; id++) if (!seen[id]) problems.push(`particle ${id} lost`);
  if (back.getInt() !== n) problems.push(`the array holds ${back.getInt()} particles, not ${n}`);
  if (!(worst <= 1e-12)) problems.push(`a position or velocity is ${worst} from the reference`);
  const how = `n=${n}, ${steps} steps, ${nodes} node(s), ${weighted ? 'weighted' : 'fixed'} shares`;
  if (problems.length > 0) {
    console.log(`collapse: FAILED (${how}: ${problems.slice(0, 5).join('; ')}${problems.length > 5 ? `; … ${problems.length} problems` : ''})`);
    throw new Error('collapse: result mismatch');
  }
  console.log(`collapse: OK (${how}; ${ref ? `max deviation from the reference ${worst}` : 'ids only'})`);
}

/** Prints each window's shares and throughputs (on `--define SHOW`) */
export function c_show(step: number, w: DF, t: DF): void {
  const rows = w.getValue() as Stats;
  console.log(`step ${step}: ` + rows.map(([n, s, sub], k) => `node ${k} ${n} particle-steps ${(1000 * s!).toFixed(1)} ms ${sub} sub-steps`).join(', '));
}
