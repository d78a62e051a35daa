// The keys of DFs freed by their request count, in little memory (the store asks it whether a
// request or a post comes after the free). A key's trailing indices are numbers: a chain or a
// sweep frees index after index, and a stencil frees row after row, so the freed keys of a
// family are ranges of its last index, and rows that freed the same ranges are one run of rows.
// The common cases cost O(1) memory whatever the run's length, and a look-up neither slices nor
// hashes the key (the store asks for every DF it has not seen yet: a read before the post, a
// post before any read).
import type { DfKey } from '../../core/dfkey.js';
import { lastKey, lastKeyBase, lastKeyPacked, lastKeyTable } from '../../program/keys.js';

/** Rows `lo`..`hi` of a family, each with the same freed last indices (`cols`, sorted ranges [a, b, …]). */
export interface RowRun { lo: number; hi: number; cols: number[] }

/**
 * Where a key's family keeps its freed indices, as has() found them. The store keeps it on the
 * DF's entry: a DF is looked up once (its first post or read) and added once (its free), and
 * the add then neither reads the key again nor looks its family up (in a short run that code
 * is still unoptimised, where each call and property read counts).
 */
export interface FreedPlace {
  /**
   * the family's freed indices: ranges (numbers: a key with one index) or runs of rows (two or
   * more); never empty. null: add() reads the key.
   */
  fam: number[] | RowRun[] | null;
  /** the key's second-to-last index (with one index: anything) and its last */
  frow: number;
  fcol: number;
}

/**
 * A family of keys as FreedKeys keeps it: by rows (the key's second-to-last part is a number) or
 * by ranges of its last index. What a planned loop's kept output is recorded under, by numbers
 * (addIn), its key never spelled.
 */
export interface Family {
  readonly fam: string;
  readonly rows: boolean;
  /** keys of one index under a base that ends in one (`x#.3` + `.7`): that index, their row */
  readonly row: number;
}

/**
 * The family of the keys `base.l0.….lk.i.j` (`lead`: the constant indices before the last two;
 * `indices`: how many the key has), as parse() would find it from a key's text.
 */
export function familyOf(base: string, lead: readonly number[], indices: number): Family {
  if (indices >= 2) {
    let fam = base;
    for (let j = 0; j < lead.length; j++) fam += `.${lead[j]!}`;
    return { fam, rows: true, row: 0 };
  }
  const d = intBefore(base, base.length);
  return d >= 0 ? { fam: base.slice(0, d), rows: true, row: scanned } : { fam: base, rows: false, row: 0 };
}

/** The row and the last index of the key inFamily() found in its family (module variables: no pair a key). */
export let foundRow = 0;
export let foundCol = 0;

/** Whether `key` is a key of family `f`; its row and last index are then in foundRow, foundCol. */
export function inFamily(key: string, f: Family): boolean {
  const d = intBefore(key, key.length);
  if (d < 0) return false;
  const col = scanned;
  const fam = f.fam;
  if (!f.rows) {
    if (d !== fam.length || !key.startsWith(fam)) return false;
    foundRow = 0;
  } else {
    const d2 = intBefore(key, d);
    if (d2 < 0 || d2 !== fam.length || !key.startsWith(fam)) return false;
    foundRow = scanned;
  }
  foundCol = col;
  return true;
}

/** Family prefixes remembered per kind of key (a sweep posts row t while it frees row t - 1). */
const RECENT = 4;

export class FreedKeys {
  /**
   * Keys with one index (`x#3.7`): per family prefix (`x#3`), the freed indices as sorted
   * ranges [a, b, c, d, …] (a..b, c..d).
   */
  private readonly ranges = new Map<string, number[]>();
  /**
   * Keys with two indices or more (`v#3.5.1`): per family prefix (the key up to its
   * second-to-last index: `v#3`), runs of rows (the second-to-last index) by row, each row's
   * freed last indices as ranges. A stencil's family stays one prefix, and its finished rows one run.
   */
  private readonly rows = new Map<string, RowRun[]>();
  /** keys whose last part is not a number, kept whole */
  private readonly other = new Set<string>();
  /** the family prefixes looked up last, per kind, and what they hold */
  private readonly recentRanges = new Recent(this.ranges);
  private readonly recentRows = new Recent(this.rows);
  /**
   * The key parsed last (parse): its last index (`col`) and its dot, the index before it (`row`,
   * left as it was when there is none) and its dot (-1: none). Small ints: a double in a field
   * would box it, and the store copies `row` into every entry.
   */
  col = 0;
  private dot = -1;
  row = 0;
  private dot2 = -1;
  /**
   * The key has() was asked last, whose `row` and `col` are the ones above, and its family's
   * freed indices (see FreedPlace): read by the store when it makes that key's entry (fields,
   * not a call: the store does it for every DF).
   */
  seenKey: DfKey | null = null;
  seenFam: number[] | RowRun[] | null = null;

  add(key: DfKey): void {
    this.seenKey = null; // the parse below is another key's
    if (!this.parse(key)) { this.other.add(key); return; }
    const i = this.col;
    if (this.dot2 < 0) {
      const r = this.recentRanges.of(key, this.dot);
      if (r === undefined) this.recentRanges.set(key.slice(0, this.dot), [i, i]);
      else addToRanges(r, i);
      return;
    }
    let runs = this.recentRows.of(key, this.dot2);
    if (runs === undefined) this.recentRows.set(key.slice(0, this.dot2), runs = []);
    addToRows(runs, this.row, i);
  }

  /**
   * Add the key of family `f` at `row` (ignored by ranges) and last index `col`, given as
   * numbers: what add() does with the key's text, without it. False when it was freed already
   * (nothing added: a second assignment, which the caller reports from the key).
   */
  addIn(f: Family, row: number, col: number): boolean {
    this.seenKey = null;
    if (f.rows) {
      let runs = this.recentRows.ofFamily(f.fam);
      if (runs === undefined) this.recentRows.set(f.fam, runs = []);
      else { const k = runAt(runs, row); if (k >= 0 && inRanges(runs[k]!.cols, col)) return false; }
      addToRows(runs, row, col);
      return true;
    }
    const r = this.recentRanges.ofFamily(f.fam);
    if (r === undefined) { this.recentRanges.set(f.fam, [col, col]); return true; }
    if (inRanges(r, col)) return false;
    addToRanges(r, col);
    return true;
  }

  /**
   * Whether any key of family `f` at row `ar·t + br` and last index `ac·t + bc`, for t from `t0`
   * to `t1`, is freed already (addIn of each would say false).
   */
  anyIn(f: Family, t0: number, t1: number, ar: number, br: number, ac: number, bc: number): boolean {
    if (f.rows) {
      const runs = this.recentRows.ofFamily(f.fam);
      if (runs === undefined) return false;
      for (let t = t0; t <= t1; t++) { const k = runAt(runs, ar * t + br); if (k >= 0 && inRanges(runs[k]!.cols, ac * t + bc)) return true; }
      return false;
    }
    const r = this.recentRanges.ofFamily(f.fam);
    if (r === undefined) return false;
    if (ac === 1) return overlaps(r, t0 + bc, t1 + bc);
    for (let t = t0; t <= t1; t++) if (inRanges(r, ac * t + bc)) return true;
    return false;
  }

  /**
   * addIn() of the keys anyIn() names, none of them freed yet (the caller asked): a planned
   * loop's iterations stepped natively, recorded at once. A chain's run of indices widens its
   * last range in one store.
   */
  addRangeIn(f: Family, t0: number, t1: number, ar: number, br: number, ac: number, bc: number): void {
    this.seenKey = null;
    if (f.rows) {
      let runs = this.recentRows.ofFamily(f.fam);
      if (runs === undefined) this.recentRows.set(f.fam, runs = []);
      for (let t = t0; t <= t1; t++) addToRows(runs, ar * t + br, ac * t + bc);
      return;
    }
    let r = this.recentRanges.ofFamily(f.fam);
    if (r === undefined) { const c = ac * t0 + bc; this.recentRanges.set(f.fam, r = [c, c]); t0++; }
    if (t0 > t1) return;
    const n = r.length;
    if (ac === 1 && r[n - 1] === t0 + bc - 1) { r[n - 1] = t1 + bc; return; }
    for (let t = t0; t <= t1; t++) addToRanges(r, ac * t + bc);
  }

  /** Add a key whose place has() found (`p.fam` set), or else `key` itself. */
  addAt(key: DfKey, p: FreedPlace): void {
    const fam = p.fam;
    if (fam === null) this.add(key);
    else if (typeof fam[0] === 'number') addToRanges(fam as number[], p.fcol);
    else addToRows(fam as RowRun[], p.frow, p.fcol);
  }

  has(key: DfKey): boolean {
    this.seenKey = key;
    // the key a compiled reference located just before: its indices are known as numbers
    const t = lastKeyTable;
    if (key === lastKey && t !== null) {
      const packed = lastKeyPacked;
      // two indices: the family is the base (packed < 2^30: int arithmetic)
      if (t.arity === 2) return this.hasInRows(lastKeyBase, packed >>> t.bits, packed & (t.bound - 1));
      if (t.arity === 1) {
        const base = lastKeyBase;
        if (base !== this.locBase) this.learnBase(base);
        return this.locRows ? this.hasInRows(this.locFam, this.locRow, packed) : this.hasInRanges(this.locFam, packed);
      }
    }
    if (!this.parse(key)) { this.seenFam = null; return this.other.size > 0 && this.other.has(key); }
    if (this.dot2 < 0) {
      const r = this.recentRanges.of(key, this.dot);
      if (r === undefined) { this.seenFam = null; return false; }
      this.seenFam = r;
      return inRanges(r, this.col);
    }
    const runs = this.recentRows.of(key, this.dot2);
    if (runs === undefined) { this.seenFam = null; return false; }
    this.seenFam = runs;
    const k = runAt(runs, this.row);
    return k >= 0 && inRanges(runs[k]!.cols, this.col);
  }

  /**
   * has() of a key of family `fam` (kept by rows) with its last two indices `row` and `col`, as
   * parse() would find them: the key a compiled reference located (program/keys.ts lastKey).
   */
  private hasInRows(fam: string, row: number, col: number): boolean {
    this.row = row;
    this.col = col;
    const runs = this.recentRows.ofFamily(fam);
    if (runs === undefined) { this.seenFam = null; return false; }
    this.seenFam = runs;
    const k = runAt(runs, row);
    return k >= 0 && inRanges(runs[k]!.cols, col);
  }

  /** hasInRows() of a key whose index before its last is not a number (kept by ranges). */
  private hasInRanges(fam: string, col: number): boolean {
    this.col = col;
    const r = this.recentRanges.ofFamily(fam);
    if (r === undefined) { this.seenFam = null; return false; }
    this.seenFam = r;
    return inRanges(r, col);
  }

  /**
   * The family of the keys with one index of `base`, as parse() finds it: with a row when the
   * base ends in an index (a `name` parameter: `x#.3` for the caller's `x[3]`). Read once per base.
   */
  private learnBase(base: string): void {
    const d = intBefore(base, base.length);
    this.locBase = base;
    this.locRows = d >= 0;
    this.locRow = d >= 0 ? scanned : 0;
    this.locFam = d >= 0 ? base.slice(0, d) : base;
  }

  /** learnBase(): the last base of a key with one index, and what it holds */
  private locBase = '';
  private locRows = false;
  private locRow = 0;
  private locFam = '';

  /**
   * Read the key's last two indices from its end (no substring, no parse allocation): false when
   * its last part is not a number. `dot2` is -1 when the part before it is not a number either
   * (`x#3.7`: `3` is the block, not an index).
   */
  private parse(key: string): boolean {
    const d = intBefore(key, key.length);
    if (d < 0) return false;
    this.col = scanned;
    this.dot = d;
    const d2 = intBefore(key, d);
    this.dot2 = d2;
    if (d2 >= 0) this.row = scanned;
    return true;
  }
}

/**
 * A family map with its last RECENT prefixes in front: a look-up of key[0, dot) compares the
 * remembered prefixes with the key in place, and builds the prefix only when none matches.
 */
class Recent<T> {
  private readonly base: string[] = new Array<string>(RECENT).fill('');
  private readonly value: (T | undefined)[] = new Array<T | undefined>(RECENT).fill(undefined);
  private next = 0;

  constructor(private readonly map: Map<string, T>) {}

  /** What the family key[0, dot) holds. */
  of(key: DfKey, dot: number): T | undefined {
    const bs = this.base;
    for (let j = 0; j < RECENT; j++) {
      const b = bs[j]!;
      if (b.length === dot && key.startsWith(b)) return this.value[j];
    }
    const base = key.slice(0, dot);
    const r = this.map.get(base);
    this.remember(base, r); // a family with nothing freed yet too: its posts ask again
    return r;
  }

  /** What the family `base` holds (a key's located family: nothing to compare in place). */
  ofFamily(base: string): T | undefined {
    const bs = this.base;
    for (let j = 0; j < RECENT; j++) if (bs[j] === base) return this.value[j];
    const r = this.map.get(base);
    this.remember(base, r);
    return r;
  }

  /** A new family `base` holds `v`. */
  set(base: string, v: T): void {
    this.map.set(base, v);
    this.remember(base, v);
  }

  private remember(base: string, v: T | undefined): void {
    const bs = this.base;
    let j = bs.indexOf(base);
    if (j < 0) { j = this.next; this.next = (j + 1) % RECENT; bs[j] = base; }
    this.value[j] = v;
  }
}

/** The integer intBefore found last (a module variable: no pair allocated per key). */
let scanned = 0;

/**
 * The integer part of `s` ending at `end` and the dot before it: the dot's position, with the
 * number in `scanned`; -1 when s[.., end) does not end with `.<integer>` (at most 15 digits).
 */
function intBefore(s: string, end: number): number {
  let i = end - 1, v = 0, scale = 1;
  for (; i >= 0; i--) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) break;
    v += c * scale;
    scale *= 10;
  }
  const digits = end - 1 - i;
  if (digits === 0 || digits > 15) return -1;
  if (i >= 0 && s.charCodeAt(i) === 45) { v = -v; i--; }
  if (i < 0 || s.charCodeAt(i) !== 46) return -1;
  scanned = v;
  return i;
}

/** Whether sorted ranges `r` ([a, b, c, d, …]) hold `i`. */
function inRanges(r: number[], i: number): boolean {
  const n = r.length;
  if (n === 2) return r[0]! <= i && i <= r[1]!;
  let lo = 0, hi = n >> 1;
  while (lo < hi) { const m = (lo + hi) >> 1; if (r[2 * m + 1]! < i) lo = m + 1; else hi = m; }
  return 2 * lo < n && r[2 * lo]! <= i;
}

/** Whether sorted ranges `r` hold any of `a`..`b`. */
function overlaps(r: number[], a: number, b: number): boolean {
  const n = r.length;
  let lo = 0, hi = n >> 1;
  while (lo < hi) { const m = (lo + hi) >> 1; if (r[2 * m + 1]! < a) lo = m + 1; else hi = m; }
  return 2 * lo < n && r[2 * lo]! <= b;
}

/** Add `i` to sorted ranges `r`, widening and merging ranges it touches. */
function addToRanges(r: number[], i: number): void {
  const n = r.length;
  if (n > 0 && i === r[n - 1]! + 1) { r[n - 1] = i; return; } // the usual next index
  // find the first range ending at or after i - 1
  let lo = 0, hi = n >> 1;
  while (lo < hi) { const m = (lo + hi) >> 1; if (r[2 * m + 1]! < i - 1) lo = m + 1; else hi = m; }
  const k = 2 * lo;
  if (k < n && r[k]! <= i + 1) {
    // touches or overlaps range lo: widen it, then merge with the next one if they meet
    if (i < r[k]!) r[k] = i;
    if (i > r[k + 1]!) r[k + 1] = i;
    if (k + 2 < n && r[k + 2]! <= r[k + 1]! + 1) { r[k + 1] = Math.max(r[k + 1]!, r[k + 3]!); removeAt(r, k + 2, 2); }
    return;
  }
  // (by hand, as below: splice returns a new array of what it removed, even when nothing)
  r.push(i, i);
  for (let j = n - 1; j >= k; j--) r[j + 2] = r[j]!;
  r[k] = r[k + 1] = i;
}

/** Remove `count` items of `a` from `k` on, in place (no array of the removed made). */
function removeAt<T>(a: T[], k: number, count: number): void {
  const n = a.length;
  for (let j = k + count; j < n; j++) a[j - count] = a[j]!;
  for (let j = 0; j < count; j++) a.pop();
}

/** Insert `x` into `a` at `k`, in place. */
function insertAt<T>(a: T[], k: number, x: T): void {
  const n = a.length;
  a.push(x);
  for (let j = n - 1; j >= k; j--) a[j + 1] = a[j]!;
  a[k] = x;
}

/** The index of the run holding row `t` (-1: none). */
function runAt(runs: RowRun[], t: number): number {
  const n = runs.length;
  if (n === 0) return -1;
  const last = runs[n - 1]!;
  if (last.lo <= t) return t <= last.hi ? n - 1 : -1; // the usual: the newest rows
  const k = runBefore(runs, t);
  return k >= 0 && t <= runs[k]!.hi ? k : -1;
}

/** The index of the last run starting at or before row `t` (-1: none). */
function runBefore(runs: RowRun[], t: number): number {
  let lo = 0, hi = runs.length;
  while (lo < hi) { const m = (lo + hi) >> 1; if (runs[m]!.lo <= t) lo = m + 1; else hi = m; }
  return lo - 1;
}

/**
 * Free (row `t`, last index `i`) in `runs`: the row gets a run of its own if it shared one, and
 * runs of adjacent rows that end up with the same ranges merge. No two runs share a ranges array.
 */
function addToRows(runs: RowRun[], t: number, i: number): void {
  const n = runs.length;
  if (n > 0) {
    // the usual cases first, in place: the newest row widens, or a new row follows the newest
    const last = runs[n - 1]!;
    if (last.lo === t && last.hi === t) {
      const c = last.cols;
      if (c.length === 2 && i === c[1]! + 1) c[1] = i;
      else if (inRanges(c, i)) return;
      else addToRanges(c, i);
      if (n > 1) {
        // a stencil's row freed whole joins the rows before it: its one range compared in place,
        // and the spare kept without a call (twice a row, unoptimised for a short run's first thousands)
        const prev = runs[n - 2]!, pc = prev.cols;
        if (prev.hi === t - 1 && (pc.length === 2 && c.length === 2 ? pc[0] === c[0] && pc[1] === c[1] : sameRanges(pc, c))) {
          prev.hi = t;
          runs.pop();
          if (spares.length < SPARES) spares.push(last);
        }
      }
      return;
    }
    if (last.hi === t - 1) {
      const c = last.cols;
      if (c.length === 2 && c[0] === i && c[1] === i) last.hi = t;
      else runs.push(newRun(t, i));
      return;
    }
  }
  let k = runBefore(runs, t);
  let run: RowRun;
  if (k >= 0 && t <= runs[k]!.hi) {
    const r = runs[k]!;
    if (inRanges(r.cols, i)) return;
    if (r.lo === t && r.hi === t) run = r;
    else {
      // split the run around row t
      run = copyRun(t, t, r.cols);
      const after: RowRun | null = t < r.hi ? copyRun(t + 1, r.hi, r.cols) : null;
      if (r.lo < t) { r.hi = t - 1; k++; insertAt(runs, k, run); } else { runs[k] = run; keep(r); }
      if (after !== null) insertAt(runs, k + 1, after);
    }
    addToRanges(run.cols, i);
  } else {
    run = newRun(t, i);
    k++;
    if (k === runs.length) runs.push(run); else insertAt(runs, k, run);
  }
  // merge with the rows either side when they freed the same
  if (k > 0) {
    const prev = runs[k - 1]!;
    if (prev.hi === run.lo - 1 && sameRanges(prev.cols, run.cols)) { prev.hi = run.hi; drop(runs, k); k--; run = prev; }
  }
  if (k + 1 < runs.length) {
    const next = runs[k + 1]!;
    if (next.lo === run.hi + 1 && sameRanges(next.cols, run.cols)) { run.hi = next.hi; drop(runs, k + 1); }
  }
}

/**
 * Runs merged into a neighbour, kept for the next new rows: a stencil's row starts a run of its
 * own and merges once it is freed whole, so in the steady state nothing is allocated. Several,
 * not one: on worker lanes a stencil's rows are freed out of order (a row's second index before
 * the row above it is whole), and with one spare every such row made a run, its ranges and a
 * splice's array (Task Bench stencil_1d 1×2, 10 000 steps: 161 bytes a fragment). Module-wide:
 * a run holds nothing once spare, and a few small objects outlive a store at most.
 */
const spares: RowRun[] = [];
const SPARES = 16;

function keep(r: RowRun): void {
  if (spares.length < SPARES) spares.push(r);
}

function newRun(t: number, i: number): RowRun {
  const r = spares.pop();
  if (r === undefined) return { lo: t, hi: t, cols: [i, i] };
  r.lo = r.hi = t;
  // (setting an array's length is a call into V8's runtime: a row's ranges mostly have one range)
  if (r.cols.length === 2) r.cols[0] = r.cols[1] = i; else r.cols = [i, i];
  return r;
}

/** Rows lo..hi with a copy of ranges `cols` (a spare's array reused when it has their length). */
function copyRun(lo: number, hi: number, cols: number[]): RowRun {
  const r = spares.pop();
  if (r === undefined) return { lo, hi, cols: cols.slice() };
  r.lo = lo;
  r.hi = hi;
  const c = r.cols;
  if (c.length === cols.length) for (let j = 0; j < c.length; j++) c[j] = cols[j]!;
  else r.cols = cols.slice();
  return r;
}

/** Remove run `k` (no array of the removed made) and keep it as a spare. */
function drop(runs: RowRun[], k: number): void {
  const r = runs[k]!;
  if (k === runs.length - 1) runs.pop(); else removeAt(runs, k, 1);
  keep(r);
}

function sameRanges(a: number[], b: number[]): boolean {
  if (a.length !== b.length) return false;
  for (let j = 0; j < a.length; j++) if (a[j] !== b[j]) return false;
  return true;
}
