// Preprocessed text and the compact map from its characters back to their origins
// (docs/language.md §2.8). The original keeps a tuple per character; a program of tens of
// megabytes cannot afford an object per character, so positions are integers:
//
// * every source text read (the main file, each include) is a SourceUnit occupying the global
//   positions [base, base + text.length); line/column come from a per-unit table of line
//   starts, built on first use, by binary search;
// * a PosMap maps offsets of a text (the preprocessed output, a macro body, a foreign block)
//   to global positions in run-length segments: a segment either advances with the text
//   (copied source) or repeats one position (text inserted by the preprocessor, `-D` bodies).

export interface Origin {
  file: string;
  /** 1-based; 0 when the character was inserted by the preprocessor */
  line: number;
  /** 1-based */
  col: number;
}

/** One source text read by the preprocessor. */
export interface SourceUnit {
  file: string;
  text: string;
  /** global position of text[0] */
  base: number;
}

/**
 * Offsets of a text → global source positions, in segments sorted by start offset. A segment's
 * `src` ≥ 0 advances with the text; `src` < 0 gives every character of the segment the
 * position `-src - 1`.
 */
export class PosMap {
  /** lookup cursor: scans are mostly sequential, so the last segment found is tried first */
  private cur = 0;

  constructor(
    /** typed arrays for the big output map, plain arrays for the many small ones */
    readonly starts: ArrayLike<number>,
    readonly srcs: ArrayLike<number>,
    /** number of segments in use */
    readonly count: number,
  ) {}

  /** Map of a text copied unchanged from global position `base`. */
  static identity(base: number): PosMap {
    return new PosMap([0], [base], 1);
  }

  /** Map of a text whose every character is at global position `pos`. */
  static constant(pos: number): PosMap {
    return new PosMap([0], [-pos - 1], 1);
  }

  /** Index of the segment holding `offset` (the last one for offsets past the end). */
  segmentAt(offset: number): number {
    const { starts, count } = this;
    let c = this.cur;
    if (c < count && starts[c]! <= offset && (c + 1 >= count || offset < starts[c + 1]!)) return c;
    c++;
    if (c < count && starts[c]! <= offset && (c + 1 >= count || offset < starts[c + 1]!)) return (this.cur = c);
    let lo = 0, hi = count - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return (this.cur = lo);
  }

  /** Global source position of the character at `offset`; -1 for an empty map. */
  posAt(offset: number): number {
    if (this.count === 0) return -1;
    const k = this.segmentAt(offset);
    const s = this.srcs[k]!;
    return s >= 0 ? s + (offset - this.starts[k]!) : -s - 1;
  }
}

/**
 * Builds a PosMap while a text is appended to; adjacent compatible runs merge. Small maps (macro
 * arguments and expansions, made by the thousand) stay in plain arrays; a map that grows past
 * SMALL segments moves to typed arrays, 12 bytes a segment, grown by half.
 */
export class PosMapBuilder {
  private static readonly SMALL = 1024;
  private starts: number[] | Int32Array = [];
  private srcs: number[] | Float64Array = [];
  private n = 0;
  /** length of the text mapped so far */
  length = 0;

  /** `count` characters starting at global position `pos`, advancing or all at `pos`. */
  add(pos: number, count: number, constant: boolean): void {
    if (count <= 0) return;
    const k = this.n - 1;
    const enc = constant ? -pos - 1 : pos;
    if (k >= 0) {
      const s = this.srcs[k]!;
      const len = this.length - this.starts[k]!;
      if (!constant && s >= 0 && s + len === pos) {
        this.length += count;
        return;
      }
      // more characters at the position of the last one (a one-character macro used again and
      // again, inserted text): the segment is, or becomes, a constant one
      if ((constant || count === 1) && (s < 0 ? s === -pos - 1 : len === 1 && s === pos)) {
        this.srcs[k] = -pos - 1;
        this.length += count;
        return;
      }
    }
    if (this.n === this.starts.length && !Array.isArray(this.starts)) this.grow(Math.ceil(this.n * 1.5));
    else if (this.n === PosMapBuilder.SMALL) this.grow(this.n * 2);
    this.starts[this.n] = this.length;
    this.srcs[this.n] = enc;
    this.n++;
    this.length += count;
  }

  private grow(cap: number): void {
    const st = new Int32Array(cap), sr = new Float64Array(cap);
    st.set(this.starts);
    sr.set(this.srcs);
    this.starts = st;
    this.srcs = sr;
  }

  /** Characters [from, to) of a text mapped by `map`. */
  addFrom(map: PosMap, from: number, to: number): void {
    let k = map.segmentAt(from);
    let at = from;
    while (at < to) {
      const end = k + 1 < map.count ? Math.min(to, map.starts[k + 1]!) : to;
      const s = map.srcs[k]!;
      if (s >= 0) this.add(s + (at - map.starts[k]!), end - at, false);
      else this.add(-s - 1, end - at, true);
      at = end;
      k++;
    }
  }

  build(): PosMap {
    return new PosMap(this.starts, this.srcs, this.n);
  }
}

/** A text with the positions of its characters. */
export interface MappedText {
  readonly text: string;
  readonly map: PosMap;
}

/** A text being assembled from slices of other mapped texts, with its PosMap. */
export class MappedTextBuilder {
  private readonly parts: string[] = [];
  // the last slice is kept open so that character-by-character copies merge into one slice
  // (compared by identity: comparing equal strings would cost their length)
  private pend: MappedText | null = null;
  private pendFrom = 0;
  private pendTo = 0;
  readonly map = new PosMapBuilder();

  get length(): number {
    return this.map.length;
  }

  /** src.text[from, to) with its positions. */
  appendFrom(src: MappedText, from: number, to: number): void {
    if (to <= from) return;
    if (src === this.pend && from === this.pendTo) this.pendTo = to;
    else {
      this.flush();
      this.pend = src;
      this.pendFrom = from;
      this.pendTo = to;
    }
    this.map.addFrom(src.map, from, to);
  }

  /** One character at global position `pos`. */
  appendChar(c: string, pos: number): void {
    this.flush();
    this.parts.push(c);
    this.map.add(pos, c.length, false);
  }

  /** Inserted text: every character maps to `pos`. */
  appendConst(s: string, pos: number): void {
    this.flush();
    this.parts.push(s);
    this.map.add(pos, s.length, true);
  }

  private flush(): void {
    if (this.pend && this.pendTo > this.pendFrom) this.parts.push(this.pend.text.slice(this.pendFrom, this.pendTo));
    this.pend = null;
    this.pendFrom = this.pendTo = 0;
  }

  build(): MappedText {
    this.flush();
    const text = this.parts.length === 1 ? this.parts[0]! : this.parts.join('');
    this.parts.length = 0;
    return { text, map: this.map.build() };
  }
}

/** The source units of a preprocessing run: global position → file, line, column, line text. */
export class SourceTable {
  readonly units: SourceUnit[] = [];
  private readonly lineStarts = new Map<SourceUnit, Int32Array>();
  private size = 0;

  /** A table of units read before (a stored front end's, see stored.ts), in their order. */
  static of(units: readonly SourceUnit[]): SourceTable {
    const t = new SourceTable();
    for (const u of units) {
      if (u.base !== t.size) throw new Error(`source unit ${u.file} at ${u.base}, expected ${t.size}`);
      t.add(u.file, u.text);
    }
    return t;
  }

  /** Registers a text; its characters get the next free global positions. */
  add(file: string, text: string): SourceUnit {
    const u: SourceUnit = { file, text, base: this.size };
    this.units.push(u);
    this.size += text.length + 1; // +1: a position past the end stays inside the unit
    return u;
  }

  private unitAt(pos: number): SourceUnit | undefined {
    const us = this.units;
    let lo = 0, hi = us.length - 1;
    if (hi < 0 || pos < 0) return undefined;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (us[mid]!.base <= pos) lo = mid;
      else hi = mid - 1;
    }
    return us[lo];
  }

  private lines(u: SourceUnit): Int32Array {
    let ls = this.lineStarts.get(u);
    if (!ls) {
      const starts = [0];
      const t = u.text;
      for (let i = t.indexOf('\n'); i >= 0; i = t.indexOf('\n', i + 1)) starts.push(i + 1);
      ls = Int32Array.from(starts);
      this.lineStarts.set(u, ls);
    }
    return ls;
  }

  /** File, 1-based line and column of a global position. */
  origin(pos: number, fallbackFile = '<input>'): Origin {
    const u = this.unitAt(pos);
    if (!u) return { file: fallbackFile, line: 1, col: 1 };
    const off = pos - u.base;
    const ls = this.lines(u);
    let lo = 0, hi = ls.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (ls[mid]! <= off) lo = mid;
      else hi = mid - 1;
    }
    return { file: u.file, line: lo + 1, col: off - ls[lo]! + 1 };
  }

  /** Text of `file:line` (1-based, without its line break) as read; null when unknown. */
  lineText(file: string, line: number): string | null {
    const u = this.units.find((x) => x.file === file);
    if (!u || line < 1) return null;
    const ls = this.lines(u);
    if (line > ls.length) return null;
    const start = ls[line - 1]!;
    let end = line < ls.length ? ls[line]! - 1 : u.text.length;
    if (end > start && u.text[end - 1] === '\r') end--;
    return u.text.slice(start, end);
  }
}

export interface ForeignBlock {
  index: number;
  /** raw text of the block (`{` + inner + `}` for the `${{ … $}}` form) */
  text: string;
  /** origin of the block's first character */
  origin: Origin;
  /** positions of every character of `text` (for errors inside the block): see blockOriginOf */
  map: PosMap;
}

export interface Preprocessed {
  /** the preprocessed program text (foreign blocks replaced by ` __block(N) `) */
  text: string;
  /** global source position of every character of `text` (see originOf) */
  map: PosMap;
  /** the texts read, which the positions refer to */
  sources: SourceTable;
  blocks: ForeignBlock[];
  /** all source files read, main file first */
  files: string[];
}

/** A text taken as already preprocessed (tests, tools): positions are its own offsets. */
export function rawPreprocessed(file: string, text: string): Preprocessed {
  const sources = new SourceTable();
  const u = sources.add(file, text);
  return { text, map: PosMap.identity(u.base), sources, blocks: [], files: [file] };
}
