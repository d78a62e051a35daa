// The local block of a distributed dynamic array (docs/dda.md): the elements one node holds,
// as a CF that holds the block sees them. Pure bookkeeping over one memory block — the same
// class runs in the worker (the ucode's view) and on the system thread (migration) — with the
// operations of seed 002 §3.3 under their names: addElement, remElement, resize, getMaxNumel,
// getNumel, getMaxSize, getElsize, and typed views over the live elements without copies.
//
// Removal only marks (the element stays readable and counted until the block is released);
// defragment() at release removes the marked elements by one of the two algorithms of the
// seed: 'unordered' fills each hole with the last live element (Cabana's remove), 'ordered'
// shifts the live runs down, keeping the order.
//
// The memory is a SharedArrayBuffer: the worker that holds the block and the node's system
// thread see the same bytes, so holding a block copies nothing. It is growable: resize within
// its reserve grows it in place (no copy; a block filled by migration grew by a copy of the
// whole block each time, 10 ms for 16 MB); beyond, or to shrink, the elements are copied to a
// new one. The block's size (getMaxSize) is its own count, never more than the memory's.
import { UcodeError } from './df.js';
import { context } from './context.js';

export type DefragOrder = 'ordered' | 'unordered';
export const DEFRAG_ORDERS: readonly DefragOrder[] = ['ordered', 'unordered'];

/** A typed-array constructor a view can be made of. */
export type ViewCtor<T> = { new (buffer: ArrayBufferLike, byteOffset: number, length: number): T; readonly BYTES_PER_ELEMENT: number };

export class DdaBlock {
  private buf: SharedArrayBuffer;
  private u8: Uint8Array;
  private n: number;
  /** the block's size in bytes (≤ the memory's) */
  private size: number;
  /** indices marked for removal since the last defragmentation (unsorted, may repeat) */
  private marked: number[] = [];
  /** each element's destination node, as the holder set them (destinations()) */
  private dests: Int32Array | null = null;
  /** what a destination entry names when the holder gave targets (destinations(to)) */
  private targets: DdaPartTarget[] | null = null;
  /** resize() replaced the memory since this object was made */
  resized = false;
  /** which of its node's blocks this is, of how many (arrays of several blocks a node) */
  index = 0;
  blocks = 1;

  /**
   * A block of elements of `elsize` bytes in `buffer` (its length is the capacity), the first
   * `numel` live, defragmented by `order` at release. `name` names it in messages ("array P,
   * block of node 2").
   */
  constructor(readonly elsize: number, buffer: SharedArrayBuffer, numel: number, readonly order: DefragOrder = 'unordered', readonly name = 'the block', size = buffer.byteLength) {
    if (!Number.isInteger(elsize) || elsize <= 0) throw new RangeError(`${name}: element size ${elsize} is not a positive integer`);
    if (!(size <= buffer.byteLength)) throw new RangeError(`${name}: a block of ${size} bytes in ${buffer.byteLength} bytes of memory`);
    if (!Number.isInteger(numel) || numel < 0 || numel * elsize > size) throw new RangeError(`${name}: ${numel} elements of ${elsize} bytes do not fit its ${size} bytes`);
    this.buf = buffer;
    this.u8 = new Uint8Array(buffer);
    this.n = numel;
    this.size = size;
  }

  /** An empty block with room for `capacity` elements. */
  static create(elsize: number, capacity: number, order: DefragOrder = 'unordered', name?: string): DdaBlock {
    return new DdaBlock(elsize, memory(Math.max(0, capacity) * elsize), 0, order, name);
  }

  /** The memory (replaced by resize). */
  get buffer(): SharedArrayBuffer { return this.buf; }

  // ------------------------------------------------------------------ the seed's operations

  /**
   * `addElement(n)`: n more elements at the end; a writable byte view over them (zeroed only if
   * the memory was), or null when the block has no room (resize first).
   * `addElement(el)`: one element copied from `el` (elsize bytes); its view in the block, or null.
   */
  addElement(x: number | ArrayBufferView): Uint8Array | null {
    if (typeof x === 'number') {
      if (!Number.isInteger(x) || x < 0) throw new UcodeError(`addElement(${x}) on ${this.name}: the count must be a non-negative integer`);
      if ((this.n + x) * this.elsize > this.size) return null;
      const at = this.n * this.elsize;
      this.n += x;
      return this.u8.subarray(at, at + x * this.elsize);
    }
    if (!ArrayBuffer.isView(x)) throw new UcodeError(`addElement on ${this.name} takes a count or an element (a typed array or DataView of ${this.elsize} bytes)`);
    if (x.byteLength !== this.elsize) throw new UcodeError(`addElement on ${this.name}: the element has ${x.byteLength} bytes, the array's elements ${this.elsize}`);
    const view = this.addElement(1);
    view?.set(new Uint8Array(x.buffer, x.byteOffset, x.byteLength));
    return view;
  }

  /** Mark element `idx` for removal at release; it stays in place (and counted) until then. */
  remElement(idx: number): void {
    if (!Number.isInteger(idx) || idx < 0 || idx >= this.n) throw new UcodeError(`remElement(${idx}) on ${this.name}: no such element (it holds ${this.n})`);
    this.marked.push(idx);
  }

  /**
   * Make the memory `bytes` long: a new block with the live elements copied; every view taken
   * before is stale. Null when the live elements would not fit (remove them first).
   */
  resize(bytes: number): SharedArrayBuffer | null {
    if (!Number.isInteger(bytes) || bytes < 0) throw new UcodeError(`resize(${bytes}) on ${this.name}: the size must be a non-negative integer of bytes`);
    if (bytes < this.n * this.elsize) return null;
    const b = this.buf as Growable;
    if (bytes <= b.byteLength && (bytes > 0 || b.byteLength === 0)) { this.size = bytes; return b; }
    if (b.growable && bytes > b.byteLength && bytes <= b.maxByteLength) { b.grow(bytes); this.size = bytes; return b; }
    const next = memory(bytes);
    const u8 = new Uint8Array(next);
    u8.set(this.u8.subarray(0, this.n * this.elsize));
    this.buf = next;
    this.u8 = u8;
    this.size = bytes;
    this.resized = true;
    return next;
  }

  getMaxNumel(): number { return Math.floor(this.size / this.elsize); }
  getNumel(): number { return this.n; }
  getMaxSize(): number { return this.size; }
  getElsize(): number { return this.elsize; }
  /** Which of the node's blocks of the array this is (0 when it has one a node), and how many the node has. */
  getBlockIndex(): number { return this.index; }
  getBlocksPerNode(): number { return this.blocks; }
  /** How many distinct elements are marked for removal. */
  getMarked(): number { return new Set(this.marked).size; }

  /**
   * The destination of each element, one entry per element (`getNumel()` of them, all -1 at
   * first): an element given a destination leaves this block at release and is delivered by the
   * target array's next global operation (globalCount or rearrange), as Cabana's Distributor and
   * AMReX's Redistribute deliver particles that left a subdomain. -1 stays. Without `to`, an
   * entry is a node of this array (this node's number: it stays). With `to`, an entry k sends
   * the element to `to[k]`: another array of the same element size (its handle, or the DF
   * holding it) on its home node, or `{ array, node }` on that node — a particle code's
   * neighbouring subdomains, one array each. Elements added afterwards stay; one array per
   * holding (a second call returns the same one, and may not change `to`).
   */
  destinations(to?: readonly DdaTarget[]): Int32Array {
    if (to !== undefined) {
      const t = to.map((x, k) => target(x, k, this.name));
      if (this.targets !== null && (this.targets.length !== t.length || this.targets.some((x, k) => x.array !== t[k]!.array || x.node !== t[k]!.node))) {
        throw new UcodeError(`destinations of ${this.name}: asked again with other targets in the same holding`);
      }
      this.targets = t;
    } else if (this.targets !== null && this.dests !== null) {
      throw new UcodeError(`destinations of ${this.name}: asked with targets before, without now`);
    }
    if (this.dests === null || this.dests.length < this.n) {
      const d = new Int32Array(this.n).fill(STAY);
      if (this.dests !== null) d.set(this.dests);
      this.dests = d;
    }
    return this.dests;
  }

  /**
   * (the C++ glue) the destinations a C++ ucode set, marked elements already folded in as DROP;
   * with `to`, the ucode's parameters its entries index (as destinations(to))
   */
  setDestinations(d: Int32Array, to?: readonly unknown[]): void {
    this.targets = to === undefined ? null : to.map((x, k) => target(x as DdaTarget, k, this.name));
    this.dests = d;
  }

  // ------------------------------------------------------------------ views, no copies

  /** The live elements' bytes. */
  data(): Uint8Array { return this.u8.subarray(0, this.n * this.elsize); }

  /** Element `idx`'s bytes. */
  element(idx: number): Uint8Array {
    if (!Number.isInteger(idx) || idx < 0 || idx >= this.n) throw new UcodeError(`element(${idx}) of ${this.name}: no such element (it holds ${this.n})`);
    return this.u8.subarray(idx * this.elsize, (idx + 1) * this.elsize);
  }

  /** The live elements as a typed array (the element size must be a multiple of its item). */
  view<T>(ctor: ViewCtor<T>): T {
    const k = ctor.BYTES_PER_ELEMENT;
    if (this.elsize % k !== 0) throw new UcodeError(`a view of ${k}-byte items over ${this.name}, whose elements have ${this.elsize} bytes (not a multiple of ${k})`);
    return new ctor(this.buf, 0, (this.n * this.elsize) / k);
  }

  f64(): Float64Array { return this.view(Float64Array); }
  f32(): Float32Array { return this.view(Float32Array); }
  i32(): Int32Array { return this.view(Int32Array); }

  // ------------------------------------------------------------------ release

  /** Remove the marked elements by the block's algorithm; how many went. */
  defragment(): number {
    if (this.marked.length === 0) return 0;
    const ids = [...new Set(this.marked)].sort((a, b) => a - b);
    this.marked = [];
    const before = this.n;
    if (this.order === 'unordered') this.fillFromTail(ids);
    else this.shiftRuns(ids);
    return before - this.n;
  }

  /**
   * Seed 002 §3.3, without order: for each marked index, ascending, the last element moves into
   * the hole. Marked elements at the tail are dropped first, so no marked element is ever moved
   * into a hole.
   */
  private fillFromTail(ids: number[]): void {
    const es = this.elsize, u8 = this.u8;
    let n = this.n, j = ids.length - 1;
    for (let i = 0; i <= j; i++) {
      const hole = ids[i]!;
      while (j > i && ids[j] === n - 1) { n--; j--; }
      n--; // the last element: either the hole itself or the one that fills it
      if (hole < n) u8.copyWithin(hole * es, n * es, (n + 1) * es);
    }
    this.n = n;
  }

  /**
   * Seed 002 §3.3, keeping order: the runs of live elements between marked ones shift down. The
   * seed moves the trailing run at each removed run, from the end (each element may move once
   * per run after it); walking forward moves each live run once, to the same final layout.
   */
  private shiftRuns(ids: number[]): void {
    const es = this.elsize, u8 = this.u8, n = this.n;
    let to = ids[0]!;
    for (let i = 0; i < ids.length; i++) {
      const from = ids[i]! + 1;
      const end = i + 1 < ids.length ? ids[i + 1]! : n;
      if (end > from) {
        u8.copyWithin(to * es, from * es, end * es);
        to += end - from;
      }
    }
    this.n = to;
  }

  /**
   * At release: the marked elements removed and, when the holder set destinations, the leaving
   * elements packed, one part per destination (in shared memory: they reach the system thread
   * uncopied). One pass over the destinations; runs of neighbours going the same way move as one
   * copy. The staying elements keep their order. `rank` is this node, `nodes` the run's size.
   */
  settle(rank: number, nodes: number): DdaPart[] {
    const d = this.dests, targets = this.targets;
    this.dests = null;
    this.targets = null;
    if (d === null) { this.defragment(); return []; }
    // removal wins over a destination; elements added after destinations() are defragmented
    // as usual, which moves none before them
    const m = Math.min(d.length, this.n);
    const rest: number[] = [];
    for (const i of this.marked) { if (i < m) d[i] = DROP; else rest.push(i); }
    this.marked = rest;
    this.defragment();
    const n = this.n, es = this.elsize, u8 = this.u8;
    // an entry that keeps the element here: -1, or this node when entries are nodes
    const stays = (to: number): boolean => to === STAY || (targets === null && to === rank);
    // how many go where: validated here, so a bad destination names its element
    const count = new Map<number, number>();
    for (let i = 0; i < m; i++) {
      const to = d[i]!;
      if (to === DROP || stays(to)) continue;
      if (targets !== null) {
        if (!(to >= 0 && to < targets.length)) throw new UcodeError(`destinations of ${this.name}: element ${i} is sent to target ${to}, but ${targets.length} target(s) were given (0..${targets.length - 1}; -1 stays)`);
      } else if (!(to >= 0 && to < nodes)) throw new UcodeError(`destinations of ${this.name}: element ${i} is sent to node ${to}, which is not a node of this run (0..${nodes - 1}; -1 stays)`);
      count.set(to, (count.get(to) ?? 0) + 1);
    }
    if (targets !== null) for (const to of count.keys()) { const t = targets[to]!; if (t.node >= nodes) throw new UcodeError(`destinations of ${this.name}: target ${to} (array ${t.array}) is on node ${t.node}, which is not a node of this run (0..${nodes - 1})`); }
    const parts = new Map<number, Uint8Array>(), fill = new Map<number, number>();
    for (const [to, k] of count) { parts.set(to, new Uint8Array(new SharedArrayBuffer(k * es))); fill.set(to, 0); }
    let w = 0;
    for (let i = 0; i < m;) {
      const to = d[i]!;
      let j = i + 1;
      while (j < m && d[j] === to) j++;
      const from = i * es, end = j * es;
      if (stays(to)) {
        if (w !== i) u8.copyWithin(w * es, from, end);
        w += j - i;
      } else if (to !== DROP) {
        const at = fill.get(to)!;
        parts.get(to)!.set(u8.subarray(from, end), at);
        fill.set(to, at + end - from);
      }
      i = j;
    }
    if (m < n && w !== m) u8.copyWithin(w * es, m * es, n * es);
    this.n = w + (n - m);
    return [...parts].map(([to, bytes]) => (targets === null ? { node: to, bytes } : { node: targets[to]!.node, array: targets[to]!.array, spec: targets[to]!.spec, bytes }));
  }

  // ------------------------------------------------------------------ the system thread's side

  /**
   * Take the last `k` elements out (migration): a copy of their bytes, or with `view` the bytes
   * in place, no copy — valid until the block next grows over them (the layer sends such views
   * only while nothing can: the block is locked until every part has arrived). A fresh copy of a
   * MiB costs its page faults, 13 µs a page here: more than moving it over a socket.
   */
  takeTail(k: number, view = false): Uint8Array {
    if (!Number.isInteger(k) || k < 0 || k > this.n) throw new RangeError(`${this.name}: cannot take ${k} of its ${this.n} elements`);
    const from = (this.n - k) * this.elsize, to = this.n * this.elsize;
    const out = view ? this.u8.subarray(from, to) : this.u8.slice(from, to);
    this.n -= k;
    return out;
  }

  /** Append elements' bytes (migration), growing the memory when they do not fit. */
  append(bytes: Uint8Array): void {
    if (bytes.byteLength % this.elsize !== 0) throw new RangeError(`${this.name}: ${bytes.byteLength} bytes are not whole elements of ${this.elsize}`);
    const k = bytes.byteLength / this.elsize;
    if ((this.n + k) * this.elsize > this.size) this.resize(Math.max((this.n + k) * this.elsize, 2 * this.size));
    this.u8.set(bytes, this.n * this.elsize);
    this.n += k;
  }

  /** Adopt what a CF left: its memory (when it replaced it), size and count. */
  adopt(buffer: SharedArrayBuffer, numel: number, size: number): void {
    if (!(size <= buffer.byteLength) || numel * this.elsize > size) throw new RangeError(`${this.name}: ${numel} elements in a block of ${size} bytes of ${buffer.byteLength}`);
    if (buffer !== this.buf) { this.buf = buffer; this.u8 = new Uint8Array(buffer); }
    this.n = numel;
    this.size = size;
    this.marked = [];
  }
}

/** destinations(): the element stays; (internal) the element was removed */
const STAY = -1, DROP = -2;

/** A target of destinations(to): an array (its handle or its DF: its home node), or an array on a node. */
export type DdaTarget = DdaHandle | { getValue(): unknown } | { array: DdaHandle | { getValue(): unknown }; node: number };

/** A target as the block keeps it. */
interface DdaPartTarget { array: string; spec: Required<DdaSpec>; node: number }

/** Elements a holder sent away (settle): to `node`, of this array or, when named, of `array`. */
export interface DdaPart { node: number; array?: string; spec?: Required<DdaSpec>; bytes: Uint8Array }

function target(x: DdaTarget, k: number, block: string): DdaPartTarget {
  const onNode = typeof x === 'object' && x !== null && 'array' in x && 'node' in x && typeof (x as { getValue?: unknown }).getValue !== 'function';
  const h = onNode ? (x as { array: DdaHandle }).array : x as DdaHandle;
  let r: { array: string; spec: Required<DdaSpec> };
  try { r = arrayRequest(h); } catch { throw new UcodeError(`destinations of ${block}: target ${k} is not a dynamic array (a handle, the DF holding one, or { array, node })`); }
  const node = onNode ? (x as { node: number }).node : r.spec.home;
  if (!Number.isInteger(node) || node < 0) throw new UcodeError(`destinations of ${block}: target ${k} (array ${r.array}) names node ${String(node)}, not a node number`);
  return { array: r.array, spec: r.spec, node };
}

/**
 * Memory for a block of `bytes`: growable in place up to a reserve of 4× (at least 64 MiB of
 * address space, which costs nothing until used).
 */
function memory(bytes: number): SharedArrayBuffer {
  return new GrowableSab(bytes, { maxByteLength: Math.max(bytes * 4, 64 << 20) });
}

/** Growable SharedArrayBuffers (ES2024; Node 20's V8 has them, the ES2022 typings do not). */
type Growable = SharedArrayBuffer & { readonly growable: boolean; readonly maxByteLength: number; grow(bytes: number): void };
const GrowableSab = SharedArrayBuffer as unknown as new (bytes: number, o: { maxByteLength: number }) => Growable;

// ------------------------------------------------------------------ the array, as ucodes name it

/** What an array is, as its handle carries it (every node learns it from the first handle it sees). */
export interface DdaSpec {
  /** bytes per element */
  elsize: number;
  /** elements the home node's first block has room for (default 0: grow by resize) */
  capacity?: number;
  /** defragmentation at release (default 'unordered') */
  order?: DefragOrder;
  /** the node holding the global descriptor at first (default 0) */
  home?: number;
  /** blocks on every node (default 1): each a unit a CF holds on its own, and a rearrangement fills them one by one */
  blocks?: number;
}

/** Blocks a node an array may have (a C++ block slot carries the index in 12 bits, luna_ucode_abi.h). */
export const MAX_BLOCKS = 2048;

/**
 * The value of a DF that names a dynamic array: passed to a `block` parameter, the CF gets its
 * node's block (`index`: that block of the node's, blockOf; default 0).
 */
export interface DdaHandle { block: 'dda'; id: string; spec: Required<DdaSpec>; index?: number }

/** The handle of array `name` (a ucode sets it as a DF's value: `P.setValue(dynamicArray('P', { elsize: 16 }))`). */
export function dynamicArray(name: string, spec: DdaSpec): DdaHandle {
  if (typeof name !== 'string' || name === '') throw new UcodeError('dynamicArray: the array needs a name');
  if (!Number.isInteger(spec?.elsize) || spec.elsize <= 0) throw new UcodeError(`dynamicArray(${name}): elsize ${String(spec?.elsize)} is not a positive integer number of bytes`);
  const order = spec.order ?? 'unordered';
  if (!DEFRAG_ORDERS.includes(order)) throw new UcodeError(`dynamicArray(${name}): order '${String(order)}' is none of ${DEFRAG_ORDERS.join(', ')}`);
  const capacity = spec.capacity ?? 0, home = spec.home ?? 0, blocks = spec.blocks ?? 1;
  if (!Number.isInteger(capacity) || capacity < 0) throw new UcodeError(`dynamicArray(${name}): capacity ${capacity} is not a non-negative integer`);
  if (!Number.isInteger(home) || home < 0) throw new UcodeError(`dynamicArray(${name}): home ${home} is not a node number`);
  if (!Number.isInteger(blocks) || blocks < 1 || blocks > MAX_BLOCKS) throw new UcodeError(`dynamicArray(${name}): blocks ${blocks} is not an integer from 1 to ${MAX_BLOCKS} (blocks a node)`);
  return { block: 'dda', id: name, spec: { elsize: spec.elsize, capacity, order, home, blocks } };
}

/**
 * The handle of block `j` of array `h` (0 ≤ j < its blocks a node): passed to a `block`
 * parameter, the CF holds that block of its node; the others stay free for other CFs, and a
 * rearrangement frees each as soon as its own parts are in.
 */
export function blockOf(h: DdaHandle | { getValue(): unknown }, j: number): DdaHandle {
  const { array, spec } = arrayRequest(h);
  const k = spec.blocks ?? 1;
  if (!Number.isInteger(j) || j < 0 || j >= k) throw new UcodeError(`blockOf(${array}, ${String(j)}): the array has ${k} block(s) a node (0..${k - 1})`);
  return { block: 'dda', id: array, spec, index: j };
}

/** The request payload naming the array of `h` (its spec too: the node may not know it yet). */
export function arrayRequest(h: DdaHandle | { getValue(): unknown }): { array: string; spec: Required<DdaSpec>; index?: number } {
  const v = (typeof (h as { getValue?: unknown }).getValue === 'function' ? (h as { getValue(): unknown }).getValue() : h) as Partial<DdaHandle>;
  if (v?.block !== 'dda' || typeof v.id !== 'string' || typeof v.spec !== 'object') throw new UcodeError('not a dynamic array: pass the DF (or its value) that dynamicArray() made');
  return v.index === undefined ? { array: v.id, spec: v.spec } : { array: v.id, spec: v.spec, index: v.index };
}

/** Options of a rearrangement beyond the seed (docs/dda.md). */
export interface RearrangeOptions {
  /** relative speeds of the new nodes, same order: shares in proportion */
  weights?: number[];
  /** move elements only between adjacent nodes */
  neighbours?: boolean;
}

/** An output DF a global operation sets when it ends (the ucode returns at once: see rearrange). */
export interface DfInto { setValue(v: unknown): void; isSet(): boolean; getName(): string }

/**
 * Rearrange the array onto `nodes` (seed 002 §2.3: equal shares, the remainder on the last
 * node) and wait for the end; the array's element count. The ucode's import must say `: WAITS`,
 * and the CF must not hold a block of the array (it would wait for itself).
 *
 * `rearrange(array, nodes, into, options?)`, with an output DF of the CF: the ucode does not
 * wait. The node sets `into` to the element count when the rearrangement ends, and the CF
 * completes then (its other outputs are published with it); its worker runs other CFs meanwhile.
 */
export function rearrange(array: DdaHandle | { getValue(): unknown }, nodes: readonly number[], o?: RearrangeOptions): number;
export function rearrange(array: DdaHandle | { getValue(): unknown }, nodes: readonly number[], into: DfInto, o?: RearrangeOptions): void;
export function rearrange(array: DdaHandle | { getValue(): unknown }, nodes: readonly number[], x: RearrangeOptions | DfInto = {}, y: RearrangeOptions = {}): number | void {
  const into = isInto(x) ? x : undefined;
  const o = into ? y : x as RearrangeOptions;
  const payload = { ...arrayRequest(array), nodes: [...nodes], weights: o.weights, neighbours: o.neighbours };
  if (into) { askLater('dda.rearrange', payload, into, 'rearrange'); return; }
  return context().request('dda.rearrange', payload) as number;
}

/**
 * The array's element count over all nodes (once every block is free; `: WAITS`).
 * `globalCount(array, into)`: the ucode does not wait; the node sets output DF `into` to the
 * count and completes the CF then (as rearrange's `into`).
 */
export function globalCount(array: DdaHandle | { getValue(): unknown }): number;
export function globalCount(array: DdaHandle | { getValue(): unknown }, into: DfInto): void;
export function globalCount(array: DdaHandle | { getValue(): unknown }, into?: DfInto): number | void {
  if (into !== undefined) {
    if (!isInto(into)) throw new UcodeError('globalCount(array, into): `into` must be an output DF of the CF (a name parameter)');
    askLater('dda.count', arrayRequest(array), into, 'globalCount');
    return;
  }
  return context().request('dda.count', arrayRequest(array)) as number;
}

function isInto(x: unknown): x is DfInto {
  return typeof x === 'object' && x !== null && typeof (x as DfInto).setValue === 'function' && typeof (x as DfInto).isSet === 'function';
}

/**
 * The request kind a ucode posts to ask without waiting (the node's request desk handles it: its
 * payload is the request and the token), and the one key of the value an output DF holds until
 * the node sets it: the token, unique on the thread.
 */
export const ASK_LATER = 'luna.later', LATER_KEY = 'luna:set-by-node';

/** what a thread's asks without waiting are numbered by */
let laterSeq = 0;

/**
 * Ask without waiting: `into` holds a marker the node replaces with the answer when the CF
 * completes. Only for imports that say `: WAITS` and hold no block: the runtime publishes none
 * of such a CF's outputs before it completes (a block holder's outputs, a particle kernel's, it
 * may feed to other lanes at once).
 */
function askLater(kind: string, payload: unknown, into: DfInto, what: string): void {
  const c = context();
  if (!c.waits) throw new UcodeError(`${what}(…, ${into.getName()}): the ucode's import must say ': WAITS' (the CF completes when its node answers)`);
  if (c.holding === true) throw new UcodeError(`${what}(…, ${into.getName()}): a ucode holding blocks (block parameters) cannot ask without waiting; ask from a CF that holds none, or wait: ${what}(…) without the output`);
  if (into.isSet()) throw new UcodeError(`${what}(…, ${into.getName()}): DF ${into.getName()} is already set`);
  const token = ++laterSeq;
  into.setValue({ [LATER_KEY]: token });
  c.post(ASK_LATER, { kind, payload, token });
}
