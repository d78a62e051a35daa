// The CFs parked on a node, in the order they parked (hang reports list them so). A Set did this
// with a table that grew and shrank as CFs parked and woke: in the 3D particle-in-cell run its
// deletes alone cost the system thread ~5 us a CF, most of it the table shrinking. Here a CF
// knows its slot (Cf.waitSlot), a wake-up empties the slot, and the list is compacted, in order,
// only when the empty slots outnumber the CFs, so the backing array never shrinks.
import type { Cf } from './fragment.js';

/** Empty slots tolerated before a compaction whatever the CFs' number (a few wake-ups are free). */
const COMPACT_MIN = 64;

export class WaitList {
  private list: (Cf | null)[] = [];
  /** slots in use, live or emptied: [0, end) */
  private end = 0;
  private n = 0;

  get size(): number { return this.n; }

  has(cf: Cf): boolean { return cf.waitSlot >= 0; }

  /** Park `cf` last (no-op when it is already parked: it keeps its place, as in a Set). */
  add(cf: Cf): void {
    if (cf.waitSlot >= 0) return;
    const l = this.list;
    cf.waitSlot = this.end;
    if (this.end === l.length) l.push(cf); else l[this.end] = cf;
    this.end++;
    this.n++;
  }

  /** Unpark `cf`; false when it was not parked. */
  delete(cf: Cf): boolean {
    const i = cf.waitSlot;
    if (i < 0) return false;
    this.list[i] = null;
    cf.waitSlot = -1;
    this.n--;
    if (this.n === 0) this.end = 0;
    else if (this.end - this.n >= COMPACT_MIN && this.end - this.n > this.n) this.compact();
    return true;
  }

  /** Move the parked CFs to the front, in order (slots beyond them emptied, the array kept). */
  private compact(): void {
    const l = this.list;
    let j = 0;
    for (let i = 0; i < this.end; i++) {
      const cf = l[i]!;
      if (cf === null) continue;
      cf.waitSlot = j;
      l[j++] = cf;
    }
    for (let i = j; i < this.end; i++) l[i] = null;
    this.end = j;
  }

  *[Symbol.iterator](): IterableIterator<Cf> {
    const l = this.list;
    for (let i = 0; i < this.end; i++) { const cf = l[i]!; if (cf !== null) yield cf; }
  }
}
