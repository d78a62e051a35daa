// A map from a node's record numbers (CF and DF numbers: integers) to the model's records, for the
// maps the model churns once per CF or DF: an entry set when a CF is created and deleted when it
// finishes. A JS Map rebuilds its table every few thousand such churns (a deleted entry's slot is
// only reclaimed by a rebuild, and a shrinking one is rebuilt too), which at 10^6 CFs was an
// eighth of all a model pass allocated. Here: open addressing with linear probing in typed
// arrays, deletion by shifting the entries after it back (no tombstones), so a steady churn
// allocates nothing; the table grows to the most entries alive at once and stays.
// Keys compare as a Map compares them (SameValueZero: NaN is one key).

export class IdMap<V> {
  private keys: Float64Array;
  private vals: (V | undefined)[];
  /** 1: slot in use */
  private used: Uint8Array;
  private mask: number;
  size = 0;
  /** the value under the key NaN (a Map's NaN key), apart from the table */
  private nanVal: V | undefined = undefined;
  private hasNan = false;

  constructor(capacity = 64) {
    let c = 16;
    while (c < 2 * capacity) c *= 2;
    this.keys = new Float64Array(c);
    this.vals = new Array<V | undefined>(c).fill(undefined);
    this.used = new Uint8Array(c);
    this.mask = c - 1;
  }

  /** The home slot of k (integers below 2^53 spread by their two 32-bit halves). */
  private slot(k: number): number {
    const lo = k >>> 0, hi = (k / 4294967296) >>> 0;
    let h = Math.imul(lo ^ Math.imul(hi, 0x27d4eb2d), 0x9e3779b1);
    h ^= h >>> 15;
    return h & this.mask;
  }

  get(k: number): V | undefined {
    if (k !== k) return this.nanVal;
    const keys = this.keys, used = this.used, mask = this.mask;
    for (let i = this.slot(k); used[i] === 1; i = (i + 1) & mask) if (keys[i] === k) return this.vals[i];
    return undefined;
  }

  has(k: number): boolean {
    if (k !== k) return this.hasNan;
    const keys = this.keys, used = this.used, mask = this.mask;
    for (let i = this.slot(k); used[i] === 1; i = (i + 1) & mask) if (keys[i] === k) return true;
    return false;
  }

  set(k: number, v: V): this {
    if (k !== k) { if (!this.hasNan) this.size++; this.hasNan = true; this.nanVal = v; return this; }
    const keys = this.keys, used = this.used, mask = this.mask;
    let i = this.slot(k);
    for (; used[i] === 1; i = (i + 1) & mask) if (keys[i] === k) { this.vals[i] = v; return this; }
    keys[i] = k; this.vals[i] = v; used[i] = 1;
    if (++this.size * 2 > mask + 1) this.grow();
    return this;
  }

  delete(k: number): boolean {
    if (k !== k) {
      if (!this.hasNan) return false;
      this.hasNan = false; this.nanVal = undefined; this.size--;
      return true;
    }
    const keys = this.keys, used = this.used, vals = this.vals, mask = this.mask;
    let i = this.slot(k);
    for (; ; i = (i + 1) & mask) {
      if (used[i] !== 1) return false;
      if (keys[i] === k) break;
    }
    // shift back every later entry of the run whose home slot is not between the hole and it
    let hole = i;
    for (let j = (i + 1) & mask; used[j] === 1; j = (j + 1) & mask) {
      const home = this.slot(keys[j]!);
      // j's entry may move into the hole unless its home lies cyclically in (hole, j]
      if (hole <= j ? (home > hole && home <= j) : (home > hole || home <= j)) continue;
      keys[hole] = keys[j]!; vals[hole] = vals[j]; hole = j;
    }
    used[hole] = 0; vals[hole] = undefined;
    this.size--;
    return true;
  }

  private grow(): void {
    const keys = this.keys, vals = this.vals, used = this.used, c = 2 * keys.length;
    this.keys = new Float64Array(c);
    this.vals = new Array<V | undefined>(c).fill(undefined);
    this.used = new Uint8Array(c);
    this.mask = c - 1;
    for (let i = 0; i < keys.length; i++) {
      if (used[i] !== 1) continue;
      let j = this.slot(keys[i]!);
      while (this.used[j] === 1) j = (j + 1) & this.mask;
      this.keys[j] = keys[i]!; this.vals[j] = vals[i]; this.used[j] = 1;
    }
  }
}
