// Binary min-heap on (t, seq): the simulator's event queue; seq keeps equal times in FIFO order.

export interface Timed { t: number; seq: number }

export class Heap<T extends Timed> {
  private readonly a: T[] = [];
  get size(): number { return this.a.length; }
  /** the time of the next element, undefined when empty */
  peekTime(): number | undefined { return this.a.length > 0 ? this.a[0]!.t : undefined; }
  push(x: T): void {
    const a = this.a;
    a.push(x);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!less(a[i], a[p])) break;
      [a[i], a[p]] = [a[p], a[i]];
      i = p;
    }
  }
  pop(): T | undefined {
    const a = this.a;
    if (a.length === 0) return undefined;
    const top = a[0], last = a.pop()!;
    if (a.length > 0) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1, r = l + 1;
        let m = i;
        if (l < a.length && less(a[l], a[m])) m = l;
        if (r < a.length && less(a[r], a[m])) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m], a[i]];
        i = m;
      }
    }
    return top;
  }
}

function less(x: Timed, y: Timed): boolean {
  return x.t < y.t || (x.t === y.t && x.seq < y.seq);
}
