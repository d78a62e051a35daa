// CF identity: stable global ids and the names users see.
//
// Global id (seed 004 §3.2.1): the parent's id followed by the spawn number of the statement
// in its block; a loop body inserts the iteration before the spawn number (`3_5_0` = statement
// 0 of iteration 5 of the loop spawned as statement 3 of main). `main` has the empty id. Ids
// are identical across runs and migrations whatever the number of nodes and threads, so a
// distribution or a recorded schedule can be keyed by them.
// A CF is shown by its label (explicit `cf link[i]:` or `_l<line>`) with its label indices:
// `link[5]`; the global id goes beside it where a user must tell instances apart.

/** Id of a child spawned by `parent` at `spawnNo` (in iteration `iter` of a loop body; -1 outside loops). */
export function childGid(parent: string, iter: number, spawnNo: number): string {
  const own = iter < 0 ? String(spawnNo) : `${iter}_${spawnNo}`;
  return parent === '' ? own : `${parent}_${own}`;
}

/** Prefix of the ids of a block spawned by a CF with id `gid` in iteration `iter` (-1: not a loop). */
export function blockPrefix(gid: string, iter: number): string {
  if (iter < 0) return gid;
  return gid === '' ? String(iter) : `${gid}_${iter}`;
}

/** `3_5_0` → [3, 5, 0]; [] for main; null when `s` is not a global id. */
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
