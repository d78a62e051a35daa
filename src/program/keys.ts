// DF keys spelled once. A DF's key is its block's base key (`x#<block id>`) and its indices
// (`x#3.1.7.2`): the store, the transport and traces know DFs by it. Spelling it — numbers to
// text, a string joined, hashed on its first map lookup — cost a reference ~550 ns, against
// ~60 ns to find the same key already spelled by its index values (measured with 4 indices). A
// DF is named by its producer and every reader (a PIC subdomain's leaving particles by 27
// references), so the references of one DF name in a sub share a table of the keys spelled
// lately, and they all hand the store the same string, its hash already computed.

/**
 * The key a table handed out last, with what it was made of: its base and its index values as
 * numbers (`packed` ≥ 0, by the table's `bound`). The DF store asks about the key it is given
 * (the same string: its caller located it just before) and so learns the key's indices without
 * reading them back out of the text (~480 instructions in optimised code, ~4.7 K in baseline
 * code: docs/benchmarks.md). Module variables, not a record's fields: a store to one is a plain
 * write in baseline code, where a field's store is an inline-cache call; nothing is allocated.
 */
export let lastKey = '';
export let lastKeyBase = '';
export let lastKeyPacked = 0;
export let lastKeyTable: KeyTable | null = null;

/** Index bits a table key holds in all (a small int: V8 hashes it without a heap number). */
const KEY_BITS = 30;

/**
 * Keys a table holds before it starts again (a long chain would keep every key of its run):
 * enough for the DFs a step of a program names; 8 192 keys of ~20 characters are ~0.5 MB.
 */
export const KEY_TABLE_LIMIT = 8192;

/**
 * Slots of the cache in front of the maps (by packed indices, Fibonacci-hashed): a fragment's
 * references name keys of the last few steps, found there without a map look-up. A map of
 * thousands of keys cost a look-up 100–300 ns in a run (cache misses: 6.5 % of the system
 * thread's pump on the empty-kernel stencil, perf), a slot a few.
 */
const HOT_BITS = 6;

/**
 * The keys of one DF name with `arity` indices in one sub, by base key and index values. Index
 * values that do not fit (negative, or beyond the bits an index gets) are spelled every time.
 */
export class KeyTable {
  private readonly bases = new Map<string, Map<number, string>>();
  private size = 0;
  /** the last base asked: a fragment's references mostly share their block */
  private lastBase = '';
  private last: Map<number, string> | undefined;
  /** bits per index, and the bound each index value must stay under */
  readonly bits: number;
  readonly bound: number;
  /** the cache: per slot the packed indices (-1: empty), the base and the key */
  private readonly hotPacked = new Int32Array(1 << HOT_BITS).fill(-1);
  private readonly hotBase: string[] = new Array<string>(1 << HOT_BITS).fill('');
  private readonly hotKey: string[] = new Array<string>(1 << HOT_BITS).fill('');

  /** `limit`: keys held before it starts again (KEY_TABLE_LIMIT; less only to warm `set` up, below) */
  constructor(readonly arity: number, private readonly limit = KEY_TABLE_LIMIT) {
    this.bits = arity === 0 ? KEY_BITS : Math.floor(KEY_BITS / arity);
    this.bound = 2 ** this.bits;
  }

  /** The index values as one small int, or -1 when one does not fit. */
  pack(vals: readonly number[]): number {
    let n = 0;
    const bound = this.bound;
    for (let i = 0; i < vals.length; i++) {
      const v = vals[i]!;
      if (!(v >= 0 && v < bound)) return -1; // ints (indices are truncated), or NaN
      n = n * bound + v;
    }
    return n;
  }

  /** The key of `base` with `packed` indices (packed ≥ 0) if it was spelled lately. */
  get(base: string, packed: number): string | undefined {
    const h = Math.imul(packed, 0x9e3779b1) >>> (32 - HOT_BITS);
    if (this.hotPacked[h] === packed && this.hotBase[h] === base) {
      const key = this.hotKey[h]!;
      lastKey = key; lastKeyBase = base; lastKeyPacked = packed; lastKeyTable = this;
      return key;
    }
    const t = base === this.lastBase ? this.last : this.bases.get(base);
    if (t === undefined) return undefined;
    this.lastBase = base;
    this.last = t;
    const key = t.get(packed);
    if (key === undefined) return undefined;
    this.keep(h, base, packed, key);
    lastKey = key; lastKeyBase = base; lastKeyPacked = packed; lastKeyTable = this;
    return key;
  }

  private keep(h: number, base: string, packed: number, key: string): void {
    this.hotPacked[h] = packed;
    this.hotBase[h] = base;
    this.hotKey[h] = key;
  }

  set(base: string, packed: number, key: string): void {
    if (this.size >= this.limit) {
      this.bases.clear();
      this.size = 0;
      this.last = undefined;
      this.lastBase = '';
      this.hotPacked.fill(-1);
    }
    let t = base === this.lastBase ? this.last : this.bases.get(base);
    if (t === undefined) {
      t = new Map();
      this.bases.set(base, t);
    }
    this.lastBase = base;
    this.last = t;
    t.set(packed, key);
    this.size++;
    this.keep(Math.imul(packed, 0x9e3779b1) >>> (32 - HOT_BITS), base, packed, key);
    lastKey = key; lastKeyBase = base; lastKeyPacked = packed; lastKeyTable = this;
  }

  /** keys held (for tests) */
  get held(): number { return this.size; }
}

// The restart path of `set` runs only at a table's 8 192nd key: not yet run when `set` is
// optimised, it deoptimised `set` there, in the middle of a run, and `set` was compiled again. A
// table of limit 1 takes it at every key: run here more often than V8 calls a function before it
// records type feedback for it (8), the optimised `set` has the path's feedback.
{
  const warm = new KeyTable(1, 1);
  for (let i = 0; i < 32; i++) warm.set('', i, '');
  lastKey = '';
  lastKeyTable = null;
}

/**
 * The key from its base, the text between variable indices (`seps`, one more than them) and the
 * index values (`vals`, the variable ones at positions `at`): up to 4 unrolled. The base and the
 * text before the first index are joined once per base, not per key (a reference names one
 * block's keys in runs): a string less to allocate and copy per key spelled.
 */
export function spellKey(seps: readonly string[], nv: number): (base: string, vals: readonly number[], at: readonly number[]) => string {
  const [s0, s1, s2, s3, s4] = seps;
  let lastBase = '', head = s0!;
  switch (nv) {
    case 0: return s0 === '' ? (base) => base : (base) => base + s0;
    case 1: return (base, v, at) => {
      if (base !== lastBase) { lastBase = base; head = base + s0; }
      return `${head}${v[at[0]!]}${s1}`;
    };
    case 2: return (base, v, at) => {
      if (base !== lastBase) { lastBase = base; head = base + s0; }
      return `${head}${v[at[0]!]}${s1}${v[at[1]!]}${s2}`;
    };
    case 3: return (base, v, at) => {
      if (base !== lastBase) { lastBase = base; head = base + s0; }
      return `${head}${v[at[0]!]}${s1}${v[at[1]!]}${s2}${v[at[2]!]}${s3}`;
    };
    case 4: return (base, v, at) => {
      if (base !== lastBase) { lastBase = base; head = base + s0; }
      return `${head}${v[at[0]!]}${s1}${v[at[1]!]}${s2}${v[at[2]!]}${s3}${v[at[3]!]}${s4}`;
    };
    default: return (base, v, at) => {
      let k = base + s0;
      for (let i = 0; i < at.length; i++) k += `${v[at[i]!]}${seps[i + 1]}`;
      return k;
    };
  }
}
