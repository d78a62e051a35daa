// Collective operations over shared arrays, with UPC's synchronisation modes: on entry a rank
// moves data only once every rank has entered (IN_ALLSYNC), once the ranks whose data it touches
// have (IN_MYSYNC), or at once (IN_NOSYNC: the program guarantees it); on exit it leaves once every
// rank has finished (OUT_ALLSYNC), once the ranks touching its data have (OUT_MYSYNC), or at once.
// Data moves by pulling (each rank reads what it receives) except permute, which pushes. Each
// rank's entry, data and exit counters are on the board (board.ts), so every wait is a read.
import { CDATA, CEXIT } from './board.js';
import { missing } from './missing.js';
import { awaitEntry, awaitExit, enterCollective, exitCollective, leaving, nextArray, runtime, SharedArray, type AllocOptions } from './api.js';
import { ELEM_TYPES, SCRATCH_ARRAY, SCRATCH_SLOTS, SLOT_VALUES, type ElemArray, type ElemType } from './protocol.js';
import type { Rank } from './rank.js';
import type { SpmdOp } from '../trace/schema.js';

export const IN_NOSYNC = 1, IN_MYSYNC = 2, IN_ALLSYNC = 4, OUT_NOSYNC = 8, OUT_MYSYNC = 16, OUT_ALLSYNC = 32;
/** the default: all ranks synchronise on entry and on exit */
export const ALLSYNC = IN_ALLSYNC | OUT_ALLSYNC;

export const COLLECTIVES = ['broadcast', 'scatter', 'gather', 'gatherAll', 'exchange', 'permute', 'reduce', 'prefixReduce', 'allAlloc'] as const;
export type CollectiveName = (typeof COLLECTIVES)[number];
const kindName = (n: number): string => COLLECTIVES[n] ?? `operation ${n}`;

export type ReduceOp = 'sum' | 'prod' | 'min' | 'max' | 'and' | 'or' | 'xor' | ((a: number, b: number) => number);
const OPS: Record<Exclude<ReduceOp, (a: number, b: number) => number>, (a: number, b: number) => number> = {
  sum: (a, b) => a + b, prod: (a, b) => a * b, min: Math.min, max: Math.max,
  and: (a, b) => a & b, or: (a, b) => a | b, xor: (a, b) => a ^ b,
};

/** How a collective synchronises, from its flags. */
interface Sync { inAll: boolean; inMy: boolean; outAll: boolean; outMy: boolean }

function syncOf(r: Rank, flags: number): Sync {
  const inF = flags & (IN_NOSYNC | IN_MYSYNC | IN_ALLSYNC), outF = flags & (OUT_NOSYNC | OUT_MYSYNC | OUT_ALLSYNC);
  if ((inF & (inF - 1)) !== 0 || (outF & (outF - 1)) !== 0 || (flags & ~63) !== 0) throw r.fail(`bad synchronisation flags ${flags}: at most one IN_ and one OUT_ mode`);
  return { inAll: inF === 0 || inF === IN_ALLSYNC, inMy: inF === IN_MYSYNC, outAll: outF === 0 || outF === OUT_ALLSYNC, outMy: outF === OUT_MYSYNC };
}

const all = (r: Rank): number[] => Array.from({ length: r.threads }, (_, t) => t);
const nbOf = (a: SharedArray, n: number): number => n * ELEM_TYPES[a.type].BYTES_PER_ELEMENT;

/**
 * The skeleton every collective shares: enter, wait on entry as the mode says (`touches`: ranks
 * whose data this rank reads or writes), move, leave, wait on exit (`touchedBy`: ranks that read
 * or write this rank's data).
 */
function collective(name: CollectiveName, flags: number, touches: number[], touchedBy: number[], move: (k: number, s: Sync) => void, bytes?: Bytes): void {
  const r = runtime();
  r.op = name;
  const s = syncOf(r, flags);
  if (r.trace) r.enter(TRACE_OP[name]);
  const kind = COLLECTIVES.indexOf(name);
  const k = enterCollective(r, kind);
  if (s.inAll) for (let t = 0; t < r.threads; t++) awaitEntry(r, t, k, kind, kindName);
  else if (s.inMy) for (const t of touches) awaitEntry(r, t, k, kind, kindName);
  move(k, s);
  r.op = name;
  exitCollective(r, k);
  if (s.outAll) for (let t = 0; t < r.threads; t++) awaitExit(r, t, k);
  else if (s.outMy) for (const t of touchedBy) if (t !== r.rank) awaitExit(r, t, k);
  leaving();
  if (r.trace) r.cexit(TRACE_OP[name], bytes?.root ?? -1, traceSync(s), bytes?.sent ?? 0, bytes?.recv ?? 0);
}

/** What a rank sent and received in a collective (bytes), and its root, for the trace. */
interface Bytes { root: number; sent: number; recv: number }

const TRACE_OP: Record<CollectiveName, SpmdOp> = {
  broadcast: 'broadcast', scatter: 'scatter', gather: 'gather', gatherAll: 'gather_all', exchange: 'exchange',
  permute: 'permute', reduce: 'reduce', prefixReduce: 'prefix_reduce', allAlloc: 'all_alloc',
};

/** IN + 4 · OUT over the trace's SYNC_MODES (nosync 0, mysync 1, allsync 2). */
function traceSync(s: Sync): number {
  const mode = (all: boolean, my: boolean): number => (all ? 2 : my ? 1 : 0);
  return mode(s.inAll, s.inMy) + 4 * mode(s.outAll, s.outMy);
}

function checkPart(r: Rank, a: SharedArray, t: number, from: number, n: number, what: string): void {
  if (!(a instanceof SharedArray)) throw r.fail(`${what} is not a shared array`);
  if (!(Number.isInteger(n) && n >= 0)) throw r.fail(`bad element count ${String(n)}`);
  const have = a.layout.localLength(t);
  if (from + n > have) throw r.fail(`${what}: rank ${t} holds ${have} element(s) of shared array #${a.id}, ${from + n} needed`);
}

function rootOf(r: Rank, a: SharedArray, i: number, what: string): { root: number; j: number } {
  if (!(Number.isInteger(i) && i >= 0 && i < a.length)) throw r.fail(`${what} index ${String(i)} outside shared array #${a.id} of ${a.length} elements`);
  return { root: a.owner(i), j: a.layout.localIndex(i) };
}

/** Root's n elements from src[srcIndex] (in the root's part) into the first n local elements of every rank's dst. */
export function broadcast(dst: SharedArray, src: SharedArray, n: number, srcIndex = 0, flags = ALLSYNC): void {
  fromRoot('broadcast', dst, src, n, srcIndex, flags);
}

/** Rank t's first n local elements of dst ← the root's elements [srcIndex + t·n, …+n) of its part. */
export function scatter(dst: SharedArray, src: SharedArray, n: number, srcIndex = 0, flags = ALLSYNC): void {
  fromRoot('scatter', dst, src, n, srcIndex, flags);
}

/** One to many: every rank pulls n elements of the root's part (the same for broadcast, its own slot for scatter). */
function fromRoot(name: 'broadcast' | 'scatter', dst: SharedArray, src: SharedArray, n: number, srcIndex: number, flags: number): void {
  const r = runtime();
  r.op = name;
  const { root, j } = rootOf(r, src, srcIndex, 'source');
  const slot = name === 'scatter' ? n : 0;
  checkPart(r, src, root, j, slot * (r.threads - 1) + n, 'source');
  for (let t = 0; t < r.threads; t++) checkPart(r, dst, t, 0, n, 'destination');
  const nb = nbOf(src, n), me = r.rank;
  collective(name, flags, [root], me === root ? all(r) : [], () => {
    src.readPart(root, j + me * slot, dst.local.subarray(0, n));
  }, { root, sent: me === root ? nb * (r.threads - 1) : 0, recv: me === root ? 0 : nb });
}

/** The root's part of dst from dstIndex, [t·n, …+n) ← rank t's first n local elements of src. */
export function gather(dst: SharedArray, src: SharedArray, n: number, dstIndex = 0, flags = ALLSYNC): void {
  const r = runtime();
  r.op = 'gather';
  const { root, j } = rootOf(r, dst, dstIndex, 'destination');
  checkPart(r, dst, root, j, n * r.threads, 'destination');
  for (let t = 0; t < r.threads; t++) checkPart(r, src, t, 0, n, 'source');
  const me = r.rank;
  collective('gather', flags, me === root ? [] : [root], me === root ? all(r) : [root], (k, s) => {
    if (me !== root) return;
    const into = dst.local;
    for (let i = 1; i <= r.threads; i++) {
      const t = (me + i) % r.threads;
      // the root reads each rank once it has entered (MYSYNC), in any case for the mismatch check
      if (s.inMy) awaitEntry(r, t, k, COLLECTIVES.indexOf('gather'), kindName);
      src.readPart(t, 0, into.subarray(j + t * n, j + t * n + n));
    }
  }, { root, sent: me === root ? 0 : nbOf(src, n), recv: me === root ? nbOf(src, n) * (r.threads - 1) : 0 });
}

/** Every rank's dst part [t·n, …+n) ← rank t's first n local elements of src. */
export function gatherAll(dst: SharedArray, src: SharedArray, n: number, flags = ALLSYNC): void {
  manyToMany('gatherAll', dst, src, n, flags, () => 0);
}

/** Rank j's dst part [i·n, …+n) ← rank i's src part [j·n, …+n). */
export function exchange(dst: SharedArray, src: SharedArray, n: number, flags = ALLSYNC): void {
  const me = runtime().rank;
  manyToMany('exchange', dst, src, n, flags, () => me * n);
}

function manyToMany(name: 'gatherAll' | 'exchange', dst: SharedArray, src: SharedArray, n: number, flags: number, at: () => number): void {
  const r = runtime();
  r.op = name;
  for (let t = 0; t < r.threads; t++) {
    checkPart(r, dst, t, 0, n * r.threads, 'destination');
    checkPart(r, src, t, 0, name === 'exchange' ? n * r.threads : n, 'source');
  }
  const me = r.rank, kind = COLLECTIVES.indexOf(name);
  collective(name, flags | 0, [], all(r), (k, s) => {
    const into = dst.local;
    for (let i = 0; i < r.threads; i++) {
      const t = (me + i) % r.threads;
      // with IN_MYSYNC a rank exchanges with those that have entered, waiting for the others in turn
      if (s.inMy) awaitEntry(r, t, k, kind, kindName);
      src.readPart(t, at(), into.subarray(t * n, t * n + n));
    }
  }, { root: -1, sent: nbOf(src, n) * (r.threads - 1), recv: nbOf(src, n) * (r.threads - 1) });
}

/** Rank t's first n local elements of src → the first n local elements of rank perm[t]'s dst (perm: one integer per rank). */
export function permute(dst: SharedArray, src: SharedArray, perm: SharedArray, n: number, flags = ALLSYNC): void {
  const r = runtime();
  r.op = 'permute';
  if (!(perm instanceof SharedArray) || perm.length < r.threads) throw r.fail('perm must be a shared array of THREADS ranks');
  for (let t = 0; t < r.threads; t++) { checkPart(r, dst, t, 0, n, 'destination'); checkPart(r, src, t, 0, n, 'source'); }
  const p = new Int32Array(r.threads);
  collective('permute', flags, [], [], (k, s) => {
    // perm is read once every rank has entered its own entry (MYSYNC reads its owner's)
    for (let t = 0; t < r.threads; t++) p[t] = perm.get(t);
    r.op = 'permute';
    const seen = new Set<number>();
    for (const d of p) {
      if (!(Number.isInteger(d) && d >= 0 && d < r.threads) || seen.has(d)) throw r.fail(`perm is not a permutation of the ranks: [${[...p].join(', ')}]`);
      seen.add(d);
    }
    const to = p[r.rank]!;
    if (s.inMy) awaitEntry(r, to, k, COLLECTIVES.indexOf('permute'), kindName);
    dst.writePart(to, 0, src.local.subarray(0, n));
  }, { root: -1, sent: nbOf(src, n), recv: nbOf(src, n) });
  // OUT_MYSYNC: the rank that wrote into this one has left (its write is complete)
  if ((flags & OUT_MYSYNC) !== 0) { const from = p.indexOf(r.rank); if (from !== r.rank) awaitExit(r, from, lastCollective(r)); }
}

function lastCollective(r: Rank): number {
  return r.word(r.rank, CEXIT);
}

function opOf(r: Rank, op: ReduceOp): (a: number, b: number) => number {
  if (typeof op === 'function') return op;
  const f = OPS[op];
  if (!f) throw r.fail(`unknown reduction '${String(op)}' (one of ${Object.keys(OPS).join(', ')}, or a function)`);
  return f;
}

let scratch: SharedArray | undefined;
function scratchOf(r: Rank): SharedArray {
  scratch ??= new SharedArray(SCRATCH_ARRAY, r.threads * SCRATCH_SLOTS * SLOT_VALUES, SCRATCH_SLOTS * SLOT_VALUES, 'f64', r.init.scratch, r);
  return scratch;
}

/** This rank's scratch slot for collective k, once every rank is done with its use 8 collectives ago. */
function slot(r: Rank, k: number): Float64Array {
  for (let t = 0; t < r.threads; t++) if (t !== r.rank) awaitExit(r, t, k - SCRATCH_SLOTS);
  const s = (k % SCRATCH_SLOTS) * SLOT_VALUES;
  return (scratchOf(r).local as Float64Array).subarray(s, s + SLOT_VALUES);
}

/** dst[dstIndex] on its rank ← op over src[srcIndex, …+n). */
export function reduce(dst: SharedArray, dstIndex: number, src: SharedArray, srcIndex: number, n: number, op: ReduceOp = 'sum', flags = ALLSYNC): void {
  const r = runtime();
  r.op = 'reduce';
  const f = opOf(r, op);
  const { root } = rootOf(r, dst, dstIndex, 'destination');
  if (!(src instanceof SharedArray) || !(Number.isInteger(srcIndex) && Number.isInteger(n) && srcIndex >= 0 && n >= 0 && srcIndex + n <= src.length)) throw r.fail(`source range [${srcIndex}, ${srcIndex + n}) outside the shared array`);
  const me = r.rank, kind = COLLECTIVES.indexOf('reduce');
  collective('reduce', flags, me === root ? [] : [root], me === root ? all(r) : [root], (k) => {
    let acc = 0, have = 0;
    const loc = src.local;
    src.layout.runs(srcIndex, n, (t, j, _at, c) => {
      if (t !== me) return;
      for (let i = j; i < j + c; i++) { acc = have ? f(acc, loc[i]!) : loc[i]!; have = 1; }
    });
    const s = slot(r, k);
    s[0] = have; s[1] = acc;
    r.setWords(CDATA, k);
    if (me !== root) return;
    // the root waits for every contribution: the wait of an early reduction
    let total = 0, any = 0;
    const part = new Float64Array(2), sc = scratchOf(r), base = (k % SCRATCH_SLOTS) * SLOT_VALUES;
    for (let t = 0; t < r.threads; t++) {
      r.untilCollective(() => r.word(t, CDATA) >= k, () => `waits in reduce (collective #${k}) for the contribution of ${missing(r, (x) => r.word(x, CDATA) >= k)}`);
      awaitEntry(r, t, k, kind, kindName);
      sc.readPart(t, base, part);
      if (part[0]) { total = any ? f(total, part[1]!) : part[1]!; any = 1; }
    }
    r.op = 'reduce';
    dst.put(dstIndex, total);
  }, { root, sent: me === root ? 0 : 16, recv: me === root ? 16 * (r.threads - 1) : 0 });
}

/** dst[i] ← op over src[0 … i] for i < n (dst laid out as src). */
export function prefixReduce(dst: SharedArray, src: SharedArray, n: number, op: ReduceOp = 'sum', flags = ALLSYNC): void {
  const r = runtime();
  r.op = 'prefixReduce';
  const f = opOf(r, op);
  if (!(dst instanceof SharedArray) || !(src instanceof SharedArray) || dst.block !== src.block || dst.length < n || src.length < n || !(Number.isInteger(n) && n >= 0)) {
    throw r.fail('prefixReduce wants two shared arrays of the same block size holding at least n elements');
  }
  const B = src.block, T = r.threads, me = r.rank, nb = Math.ceil(n / B);
  const mine: number[] = [];
  for (let b = me; b < nb; b += T) mine.push(b);
  if (mine.length > SLOT_VALUES) throw r.fail(`${mine.length} blocks on one rank, at most ${SLOT_VALUES}: use a larger block size`);
  const last = mine.length ? mine[mine.length - 1]! : -1;
  // ranks owning a block before this rank's last one: their totals carry into this rank's prefixes
  const before = all(r).filter((t) => t !== me && t < last);
  const after = all(r).filter((t) => t !== me && me < Math.max(0, nb - 1) && t < nb && (t > me || nb > T));
  collective('prefixReduce', flags, before, after, (k) => {
    const s = slot(r, k);
    const loc = src.local, out = dst.local;
    for (let i = 0; i < mine.length; i++) {
      const lo = i * B, hi = lo + Math.min(B, n - mine[i]! * B);
      let acc = loc[lo]!;
      for (let x = lo + 1; x < hi; x++) acc = f(acc, loc[x]!);
      s[i] = acc;
    }
    r.setWords(CDATA, k);
    // every block total before this rank's last block, in block order
    const totals = new Float64Array(Math.max(0, last));
    const sc = scratchOf(r), base = (k % SCRATCH_SLOTS) * SLOT_VALUES;
    for (const t of before) {
      r.untilCollective(() => r.word(t, CDATA) >= k, () => `waits in prefixReduce (collective #${k}) for the block totals of rank ${t}`);
      const cnt = Math.floor((last - 1 - t) / T) + 1;
      const part = new Float64Array(cnt);
      sc.readPart(t, base, part);
      for (let i = 0; i < cnt; i++) totals[t + i * T] = part[i]!;
    }
    for (let i = 0; i < mine.length; i++) totals[mine[i]!] = s[i]!;
    r.op = 'prefixReduce';
    let carry = 0, have = false, next = 0;
    for (let i = 0; i < mine.length; i++) {
      const b = mine[i]!;
      for (; next < b; next++) { carry = have ? f(carry, totals[next]!) : totals[next]!; have = true; }
      const lo = i * B, hi = lo + Math.min(B, n - b * B);
      let acc = carry, h = have;
      for (let x = lo; x < hi; x++) { acc = h ? f(acc, loc[x]!) : loc[x]!; h = true; out[x] = acc; }
    }
  }, { root: -1, sent: 8 * mine.length, recv: 8 * Math.max(0, last - mine.length) });
}

/**
 * Allocate a shared array on every rank at once (collective: every rank calls it with the same
 * arguments, in the same order). As upc_all_alloc, the allocation is rank 0's and every rank
 * waits for it; as shmem_malloc, it ends with a barrier, so the array is usable everywhere after.
 */
export function allAlloc(length: number, o: AllocOptions = {}): SharedArray {
  const r = runtime();
  r.op = 'allAlloc';
  const block = o.block ?? 1, type: ElemType = o.type ?? 'f64';
  if (!(Number.isInteger(length) && length > 0)) throw r.fail(`bad length ${String(length)}: a positive integer`);
  if (!(Number.isInteger(block) && block > 0)) throw r.fail(`bad block size ${String(block)}: a positive integer`);
  if (!(type in ELEM_TYPES)) throw r.fail(`unknown element type '${String(type)}' (one of ${Object.keys(ELEM_TYPES).join(', ')})`);
  let a: SharedArray | undefined;
  const kind = COLLECTIVES.indexOf('allAlloc');
  r.op = 'allAlloc';
  if (r.trace) r.enter('all_alloc');
  const k = enterCollective(r, kind);
  awaitEntry(r, 0, k, kind, kindName);
  const id = nextArray();
  const site = r.site();
  const buf = r.call({ k: 'alloc', id: 0, arr: id, length, block, type, site }, 'alloc', `waits for shared array #${id}`) as SharedArrayBuffer;
  a = new SharedArray(id, length, block, type, buf, r);
  exitCollective(r, k);
  for (let t = 0; t < r.threads; t++) awaitExit(r, t, k);
  leaving();
  // rank 0 allocates and every rank waits for it (late broadcast); an implied barrier at exit
  if (r.trace) r.cexit('all_alloc', 0, 1 + 4 * 2, 0, 0);
  return a;
}

export type { ElemArray };
