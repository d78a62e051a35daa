// The queues of a node's scheduler.
//
// RunQueue: CFs to examine, first in first out, with pushFront for a lazily unrolled loop,
// which puts its next iterations (and itself behind them) at the head: the order is exactly
// that of unrolling the whole loop at once, without holding all its CFs.
// ReadyQueue: atomic CFs ready to run, FIFO, or by priority (higher first, then FIFO) when the
// policy orders them.
import type { Cf } from './fragment.js';

/** A growable ring buffer. */
export class Deque<T> {
  private buf: (T | undefined)[];
  private head = 0;
  private n = 0;

  constructor(capacity = 64) {
    this.buf = new Array(capacity);
  }

  get length(): number {
    return this.n;
  }

  push(x: T): void {
    if (this.n === this.buf.length) this.grow();
    this.buf[(this.head + this.n) % this.buf.length] = x;
    this.n++;
  }

  pushFront(x: T): void {
    if (this.n === this.buf.length) this.grow();
    this.head = (this.head - 1 + this.buf.length) % this.buf.length;
    this.buf[this.head] = x;
    this.n++;
  }

  shift(): T | undefined {
    if (this.n === 0) return undefined;
    const x = this.buf[this.head];
    this.buf[this.head] = undefined;
    this.head = (this.head + 1) % this.buf.length;
    this.n--;
    return x;
  }

  peek(): T | undefined {
    return this.n === 0 ? undefined : this.buf[this.head];
  }

  /** Element i from the head. */
  at(i: number): T {
    return this.buf[(this.head + i) % this.buf.length] as T;
  }

  /** Remove the elements for which `drop` is true (order kept); returns them. */
  removeWhere(drop: (x: T) => boolean, max = Infinity): T[] {
    const kept: T[] = [], out: T[] = [];
    for (let i = 0; i < this.n; i++) {
      const x = this.at(i);
      if (out.length < max && drop(x)) out.push(x); else kept.push(x);
    }
    this.buf = new Array(Math.max(64, kept.length * 2));
    this.head = 0;
    this.n = 0;
    for (const x of kept) this.push(x);
    return out;
  }

  private grow(): void {
    const b = new Array<T | undefined>(this.buf.length * 2);
    for (let i = 0; i < this.n; i++) b[i] = this.buf[(this.head + i) % this.buf.length];
    this.buf = b;
    this.head = 0;
  }
}

export interface ReadyQueue {
  readonly length: number;
  push(cf: Cf): void;
  shift(): Cf | undefined;
  peek(): Cf | undefined;
  /** Take up to `max` CFs matching `take`, preferring the ones that would run last. */
  takeFromTail(take: (cf: Cf) => boolean, max: number): Cf[];
}

export class FifoReady implements ReadyQueue {
  private readonly q = new Deque<Cf>(256);
  get length(): number { return this.q.length; }
  push(cf: Cf): void { this.q.push(cf); }
  shift(): Cf | undefined { return this.q.shift(); }
  peek(): Cf | undefined { return this.q.peek(); }
  takeFromTail(take: (cf: Cf) => boolean, max: number): Cf[] {
    // the tail is the work this node would do last
    const n = this.q.length;
    const marked = new Set<Cf>();
    for (let i = n - 1; i >= 0 && marked.size < max; i--) { const cf = this.q.at(i); if (take(cf)) marked.add(cf); }
    return marked.size === 0 ? [] : this.q.removeWhere((cf) => marked.has(cf));
  }
}

/** Binary heap by (priority desc, arrival asc). */
export class PriorityReady implements ReadyQueue {
  private heap: Cf[] = [];
  private seqs: number[] = [];
  private seq = 0;
  get length(): number { return this.heap.length; }

  push(cf: Cf): void {
    const h = this.heap, s = this.seqs;
    h.push(cf);
    s.push(this.seq++);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.before(i, p)) break;
      this.swap(i, p);
      i = p;
    }
  }

  peek(): Cf | undefined { return this.heap[0]; }

  shift(): Cf | undefined {
    const h = this.heap;
    if (h.length === 0) return undefined;
    const top = h[0];
    const last = h.pop()!, lastSeq = this.seqs.pop()!;
    if (h.length > 0) {
      h[0] = last;
      this.seqs[0] = lastSeq;
      this.down(0);
    }
    return top;
  }

  takeFromTail(take: (cf: Cf) => boolean, max: number): Cf[] {
    // lowest priority first: that is what this node would run last
    const order = this.heap.map((cf, i) => i).sort((a, b) => (this.before(a, b) ? 1 : -1));
    const out = new Set<Cf>();
    for (const i of order) { if (out.size >= max) break; if (take(this.heap[i]!)) out.add(this.heap[i]!); }
    if (out.size === 0) return [];
    const keep: [Cf, number][] = [];
    this.heap.forEach((cf, i) => { if (!out.has(cf)) keep.push([cf, this.seqs[i]!]); });
    this.heap = keep.map((k) => k[0]);
    this.seqs = keep.map((k) => k[1]);
    for (let i = (this.heap.length >> 1) - 1; i >= 0; i--) this.down(i);
    return [...out];
  }

  private before(a: number, b: number): boolean {
    const pa = this.heap[a]!.priority, pb = this.heap[b]!.priority;
    return pa > pb || (pa === pb && this.seqs[a]! < this.seqs[b]!);
  }

  private swap(a: number, b: number): void {
    const h = this.heap, s = this.seqs;
    const t = h[a]!; h[a] = h[b]!; h[b] = t;
    const u = s[a]!; s[a] = s[b]!; s[b] = u;
  }

  private down(i: number): void {
    const n = this.heap.length;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) return;
      const r = l + 1;
      const m = r < n && this.before(r, l) ? r : l;
      if (!this.before(m, i)) return;
      this.swap(m, i);
      i = m;
    }
  }
}
