// The system threads' busy spans (sysBusy: a pump turn, a result booked), kept per node from the
// earliest idle interval still open, to tell how much of a worker's wait for a ready CF passed
// while its node's system thread was busy with other work — the CF held back by that work —
// and how much while it was not: the hand-off itself (the result's way to the system thread,
// the dispatch, the worker's wake-up).
//
// The trace's events arrive in time order, so every span that starts before a CF's start is
// known when the CF is accounted (at its finish). One thread's spans do not overlap; a span that
// would (a damaged or merged trace) is cut at the end of the one before, so nothing counts twice.

export class BusySpans {
  /** per node: span starts and ends, [t0, t1, t0, t1, …], sorted, disjoint, from `head` on */
  private readonly spans: number[][];
  private readonly head: number[];

  constructor(nodes: number) {
    this.spans = Array.from({ length: nodes }, () => []);
    this.head = new Array<number>(nodes).fill(0);
  }

  /** Node `node`'s system thread was busy on [t0, t1). */
  add(node: number, t0: number, t1: number): void {
    const s = this.spans[node];
    if (!s || !(t1 > t0)) return;
    const last = s.length > this.head[node]! ? s[s.length - 1]! : -Infinity;
    if (t0 < last) t0 = last;
    if (t1 > t0) s.push(t0, t1);
  }

  /** ns of [x, y) during which node `node`'s system thread was busy (the spans known so far). */
  overlap(node: number, x: number, y: number): number {
    const s = this.spans[node];
    if (!s || !(y > x)) return 0;
    // the first span ending after x (ends are sorted too: the spans are disjoint)
    let lo = this.head[node]! >> 1, hi = s.length >> 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (s[2 * mid + 1]! <= x) lo = mid + 1;
      else hi = mid;
    }
    let ns = 0;
    for (let i = 2 * lo; i < s.length && s[i]! < y; i += 2) {
      const a = s[i]! > x ? s[i]! : x, b = s[i + 1]! < y ? s[i + 1]! : y;
      if (b > a) ns += b - a;
    }
    return ns;
  }

  /** Forget the spans that end before `t` (no idle interval still open reaches back past it). */
  prune(t: number): void {
    for (let n = 0; n < this.spans.length; n++) {
      const s = this.spans[n]!;
      let h = this.head[n]!;
      while (h < s.length && s[h + 1]! < t) h += 2;
      // compacted once most of the array is behind the head
      if (h > 4096 && h > s.length / 2) { s.splice(0, h); h = 0; }
      this.head[n] = h;
    }
  }
}
