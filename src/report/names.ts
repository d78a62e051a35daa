// Names of many fragments or DFs for the page (`sw[57][0]`, `x[5]`), without a string each: a
// table of base names (labels, DF families: few) and, per name, its base and its indices in
// integer columns, which deflate to a few bytes. The page's client core rebuilds a name from them
// (`h.name(table, i)`).
import { pack, type Packed } from './section.js';

/** Integer column that grows by doubling. */
class Ints {
  n = 0;
  a = new Int32Array(256);
  push(v: number): void {
    if (this.n === this.a.length) { const b = new Int32Array(this.a.length * 2); b.set(this.a); this.a = b; }
    this.a[this.n++] = v;
  }
  view(): Int32Array { return this.a.subarray(0, this.n); }
}

/** The packed form the page receives: bases, and per name its base and index range. */
export interface PackedNames { bases: string[]; base: Packed; /** cumulative index counts, one per name + 1 */ off: Packed; idx: Packed }

export class NameTable {
  private readonly ids = new Map<string, number>();
  readonly bases: string[] = [];
  private readonly base = new Ints();
  private readonly off = new Ints();
  private readonly idx = new Ints();
  constructor() { this.off.push(0); }

  get size(): number { return this.base.n; }

  /** Adds a name; returns its number. */
  add(base: string, indices: readonly number[] | null): number {
    let id = this.ids.get(base);
    if (id === undefined) { id = this.bases.length; this.bases.push(base); this.ids.set(base, id); }
    this.base.push(id);
    if (indices) for (const i of indices) this.idx.push(i);
    this.off.push(this.idx.n);
    return this.base.n - 1;
  }

  /** Adds a DF by its key (`x#3.5.2` → `x[5][2]`), without the string work of displayDf. */
  addKey(key: string): number {
    const hash = key.indexOf('#');
    if (hash < 0) return this.add(key, null);
    const dot = key.indexOf('.', hash);
    if (dot < 0) return this.add(key.slice(0, hash), null);
    const idx: number[] = [];
    for (let i = dot; i >= 0;) { const next = key.indexOf('.', i + 1); idx.push(Number(key.slice(i + 1, next < 0 ? undefined : next))); i = next; }
    return this.add(key.slice(0, hash), idx);
  }

  /**
   * Groups of names (group g: names off[g] .. off[g + 1]) in the order `perm` gives the groups:
   * the names and the new group offsets, packed.
   */
  packedGroups(perm: ArrayLike<number>, off: Int32Array): { names: PackedNames; off: Packed } {
    const order: number[] = [];
    const newOff = new Int32Array(perm.length + 1);
    for (let k = 0; k < perm.length; k++) {
      const g = perm[k]!;
      for (let i = off[g]!; i < off[g + 1]!; i++) order.push(i);
      newOff[k + 1] = order.length;
    }
    return { names: this.packed(order), off: pack(newOff) };
  }

  /** The name of number i (as the page rebuilds it). */
  name(i: number): string {
    let s = this.bases[this.base.a[i]!]!;
    for (let k = this.off.a[i]!; k < this.off.a[i + 1]!; k++) s += `[${this.idx.a[k]}]`;
    return s;
  }

  /** The names in the order `perm` gives (all of them in their own order without it). */
  packed(perm?: ArrayLike<number>): PackedNames {
    if (!perm) return { bases: this.bases, base: pack(this.base.view()), off: pack(this.off.view()), idx: pack(this.idx.view()) };
    const base = new Int32Array(perm.length), off = new Int32Array(perm.length + 1);
    let n = 0;
    for (let k = 0; k < perm.length; k++) { const i = perm[k]!; n += this.off.a[i + 1]! - this.off.a[i]!; off[k + 1] = n; base[k] = this.base.a[i]!; }
    const idx = new Int32Array(n);
    for (let k = 0; k < perm.length; k++) { const i = perm[k]!; idx.set(this.idx.a.subarray(this.off.a[i]!, this.off.a[i + 1]!), off[k]!); }
    return { bases: this.bases, base: pack(base), off: pack(off), idx: pack(idx) };
  }
}
