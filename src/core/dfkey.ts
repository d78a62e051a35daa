// DF identity: the one place that makes, indexes, displays, groups and parses DF keys.
//
// A key is the DF's fully evaluated name as the runtime, the wire and the trace carry it:
//   <name>#<block>(.<index>)*
// `name` is the declared base name, `block` the global id of the block execution that declared
// it (core/cfid.ts blockPrefix: the spawning CF's id, with the iteration for a loop body; empty
// for main's block), and each index appends `.i`. A key is therefore the same in every run, on
// every node and whatever the node count, so a distribution file can name DFs as it names CFs,
// and every node of a spread loop names an iteration's DFs alike without agreeing on anything.
// A `name` parameter passes a key prefix, so aliasing (`x[6]` inside a sub = caller's
// `z[10][6]`) is string extension.
// Users see keys as the program names the DF: `z[10][6]`; the family is the base name `z`.

export type DfKey = string;

/** The key of DF family `name` declared by the block execution with global id `block`. */
export function familyKey(name: string, block: string): DfKey {
  return `${name}#${block}`;
}

/** The key of element `i` of `base` (`x[i]`). */
export function indexKey(base: DfKey, i: number): DfKey {
  return `${base}.${i}`;
}

/** `x#12.3.4` → `x[3][4]`: the DF as the program names it. Anything that is not a key is returned as is. */
export function displayDf(key: DfKey): string {
  const hash = key.indexOf('#');
  if (hash < 0) return key;
  const dot = key.indexOf('.', hash);
  if (dot < 0) return key.slice(0, hash);
  let out = key.slice(0, hash);
  let i = dot;
  while (i < key.length) {
    const next = key.indexOf('.', i + 1);
    const end = next < 0 ? key.length : next;
    out += `[${key.slice(i + 1, end)}]`;
    i = end;
  }
  return out;
}

/** `x#12.3.4` (or its display form `x[3][4]`) → `x`: DFs aggregated over instances and indices. */
export function dfFamily(key: DfKey): string {
  const hash = key.indexOf('#');
  if (hash >= 0) return key.slice(0, hash);
  const br = key.indexOf('[');
  return br > 0 ? key.slice(0, br) : key;
}

export interface ParsedDfKey {
  name: string;
  /** global id of the declaring block execution ('' for main's block) */
  block: string;
  indices: number[];
}

const KEY_RE = /^([A-Za-z_][A-Za-z0-9_]*)#((?:(?:-?\d+|~[0-9a-f]{32})(?:_-?\d+)*)?)((?:\.-?\d+)*)$/;

/** The parts of a key; null when `s` is not a DF key. */
export function parseDfKey(s: string): ParsedDfKey | null {
  const m = KEY_RE.exec(s);
  if (!m) return null;
  return { name: m[1]!, block: m[2]!, indices: m[3] ? m[3].slice(1).split('.').map(Number) : [] };
}

/** Whether `s` is a DF key. */
export function isDfKey(s: string): boolean {
  return KEY_RE.test(s);
}

/**
 * Key of a value pushed (`afterpush X => L[i]`) to the CF labelled `L[i]`: the target label with
 * its indices, then the DF key.
 */
export function pushKey(targetLabel: string, df: DfKey): string {
  return `${targetLabel}|${df}`;
}

/** The DF key inside a push key. */
export function pushedDf(key: string): DfKey {
  return key.slice(key.indexOf('|') + 1);
}
