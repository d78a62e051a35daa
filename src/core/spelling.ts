// Near-misses of known words: `luna analyse` → analyze, `locator_cylic` → locator_cyclic.

/**
 * Edit distance (insertions, deletions, substitutions, transpositions of neighbours) between two
 * short words.
 */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/** The word of `known` that `word` probably meant: within a third of its length, at most 2 edits; none when it is itself known or far from all. */
export function closest(word: string, known: Iterable<string>): string | undefined {
  let best: string | undefined, bestD = Infinity;
  for (const c of known) {
    const d = editDistance(word.toLowerCase(), c);
    if (d < bestD) { best = c; bestD = d; }
  }
  return best !== undefined && bestD > 0 && bestD <= Math.min(2, Math.floor(word.length / 3)) ? best : undefined;
}
