// CF identity: stable global ids and the names users see.
//
// Global id (seed 004 §3.2.1): the parent's id followed by the spawn number of the statement
// in its block; a loop body inserts the iteration before the spawn number (`3_5_0` = statement
// 0 of iteration 5 of the loop spawned as statement 3 of main). `main` has the empty id. Ids
// are identical across runs and migrations whatever the number of nodes and threads, so a
// distribution or a recorded schedule can be keyed by them.
// Deep recursion (a loop written as a sub that calls itself) would grow ids by a segment per
// level, and every DF key and trace record with them: quadratic time and memory (a 32 000-deep
// recursion took 111 s and 2.1 GB). A block prefix longer than MAX_PREFIX is therefore folded
// into `~` and a 128-bit hash of it, a pure function of the path as the id itself is, so folded
// ids are as stable across runs and nodes; unfolded ids are unchanged.
// A CF is shown by its label (explicit `cf link[i]:` or `_l<line>`) with its label indices:
// `link[5]`; the global id goes beside it where a user must tell instances apart.

/** Longest block prefix kept as it is; longer ones are folded (an id stays under ~80 characters). */
export const MAX_PREFIX = 64;

/** Id of a child spawned by `parent` at `spawnNo` (in iteration `iter` of a loop body; -1 outside loops). */
export function childGid(parent: string, iter: number, spawnNo: number): string {
  const block = blockPrefix(parent, iter);
  return block === '' ? String(spawnNo) : `${block}_${spawnNo}`;
}

/**
 * Prefix of the ids of a block spawned by a CF with id `gid` in iteration `iter` (-1: not a
 * loop), and the block part of its DFs' keys; folded when longer than MAX_PREFIX. A CF's id is
 * its block prefix and its spawn number, so the prefix is the id up to its last `_`.
 */
export function blockPrefix(gid: string, iter: number): string {
  const p = iter < 0 ? gid : gid === '' ? String(iter) : `${gid}_${iter}`;
  return p.length <= MAX_PREFIX ? p : fold(p);
}

/**
 * `~` and a 128-bit hash of `s` (two rounds of cyrb53's mixing with different seeds) in 32 hex
 * digits: no collision in practice. Hex by table: Number#toString(radix) costs microseconds.
 */
function fold(s: string): string {
  return `~${mix(s, 0x9e3779b1)}${mix(s, 0x85ebca77)}`;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
const hex32 = (h: number): string => HEX[h >>> 24]! + HEX[(h >>> 16) & 255]! + HEX[(h >>> 8) & 255]! + HEX[h & 255]!;

function mix(s: string, seed: number): string {
  let h1 = 0xdeadbeef ^ seed, h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return hex32(h1) + hex32(h2);
}

/** A global id: numbers joined by `_`, the first one possibly a folded prefix (`~…`); '' is main. */
const GID_RE = /^(?:-?\d+|~[0-9a-f]{32})(?:_-?\d+)*$/;

/** Whether `s` is a CF global id (folded or not; '' is main's). */
export function isGid(s: string): boolean {
  return s === '' || GID_RE.test(s);
}

/** `3_5_0` → [3, 5, 0]; [] for main; null when `s` is not a global id or is folded. */
export function parseGid(s: string): number[] | null {
  if (s === '') return [];
  if (!/^-?\d+(?:_-?\d+)*$/.test(s)) return null;
  return s.split('_').map(Number);
}

/** `link` with indices [5] → `link[5]`. */
export function displayCf(label: string, indices: readonly number[] | null | undefined): string {
  if (!indices || indices.length === 0) return label;
  let s = label;
  for (const i of indices) s += `[${i}]`;
  return s;
}

/** A label made up by the compiler for an unlabelled statement (`_l<line>`). */
export function isLineLabel(label: string): boolean {
  return /^_l\d+$/.test(label);
}
