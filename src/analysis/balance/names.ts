// A column of names (the CFs' global ids, the DFs' keys) held as one string and the offsets of its
// names, not as a string per entry. Why: every full collection marks every live object, and a
// profile of 10^6 CFs held 2·10^6 strings — a full collection took 127 ms with them and 7 ms
// without, and the balancing step's typed columns set off several. The names are read only to
// write or match a distribution file.

export interface Names {
  /** the names, one after the other */
  readonly text: string;
  /** name i is text[at[i] .. at[i+1]) */
  readonly at: Int32Array;
}

export function namesOf(list: readonly string[]): Names {
  const at = new Int32Array(list.length + 1);
  for (let i = 0; i < list.length; i++) at[i + 1] = at[i]! + list[i]!.length;
  return { text: list.join(''), at };
}

export function nameAt(x: Names, i: number): string {
  return x.text.slice(x.at[i]!, x.at[i + 1]!);
}

export function namesCount(x: Names): number {
  return x.at.length - 1;
}

/** The names as an array of strings. */
export function nameList(x: Names): string[] {
  return Array.from({ length: namesCount(x) }, (_, i) => nameAt(x, i));
}

/** The first k names (a view: the same text). */
export function firstNames(x: Names, k: number): Names {
  return { text: x.text, at: x.at.subarray(0, k + 1) };
}
