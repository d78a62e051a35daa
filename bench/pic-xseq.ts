// xSeq measured so that load moves it less: the sequential reference's speed spreads 1.7× on this
// shared machine (3.25–5.62 M/s over 24 runs at load 5–25), so the ratio of two medians taken
// minutes apart moves ±20 % with its denominator alone. Here each 1 × 2 run has a sequential run
// right beside it, the two in swapped order every other pair (neither side always meets the load
// first), and xSeq is the median of the pairs' own ratios, printed with their spread.
import { median } from './median.js';

/** One pair: the sequential reference's and the 1 × 2 run's seconds, and the load before it. */
export interface XSeqPair {
  seqSecs: number;
  runSecs: number;
  load: number;
  /** the sequential run went first */
  seqFirst: boolean;
}

export interface XSeqSummary {
  /** the median of the pairs' ratios (sequential ÷ 1 × 2) */
  xSeq: number;
  min: number;
  max: number;
  /** the sequential reference's seconds: median, fastest, slowest */
  seqSecs: number;
  seqMinSecs: number;
  seqMaxSecs: number;
  /** the fastest 1 × 2 run's seconds */
  runMinSecs: number;
  /**
   * the fastest sequential run over the fastest 1 × 2 run: load only adds time to either, so each
   * side's fastest is its nearest to a quiet machine's
   */
  fastest: number;
  pairs: number;
}

/** `n` pairs of `seq` and `run` (each resolving to seconds), the sequential side first in the even pairs. */
export async function alternatePairs(n: number, seq: () => Promise<number>, run: () => Promise<number>, load: () => number,
  log: (p: XSeqPair, i: number) => void = () => {}): Promise<XSeqPair[]> {
  const out: XSeqPair[] = [];
  for (let i = 0; i < n; i++) {
    const l = load(), seqFirst = i % 2 === 0;
    let seqSecs: number, runSecs: number;
    if (seqFirst) { seqSecs = await seq(); runSecs = await run(); } else { runSecs = await run(); seqSecs = await seq(); }
    const p = { seqSecs, runSecs, load: l, seqFirst };
    out.push(p);
    log(p, i);
  }
  return out;
}

/** xSeq from the pairs: the median of each pair's ratio, not a ratio of medians. */
export function summarize(pairs: readonly XSeqPair[]): XSeqSummary {
  if (pairs.length === 0) throw new Error('no xSeq pairs');
  const ratios = pairs.map((p) => p.seqSecs / p.runSecs), seqs = pairs.map((p) => p.seqSecs), runMinSecs = Math.min(...pairs.map((p) => p.runSecs));
  return {
    xSeq: median(ratios), min: Math.min(...ratios), max: Math.max(...ratios),
    seqSecs: median(seqs), seqMinSecs: Math.min(...seqs), seqMaxSecs: Math.max(...seqs),
    runMinSecs, fastest: Math.min(...seqs) / runMinSecs, pairs: pairs.length,
  };
}

/** The pairs, one line: each pair's ratio with its load, in the order run. */
export function pairsNote(pairs: readonly XSeqPair[]): string {
  return pairs.map((p) => `${(p.seqSecs / p.runSecs).toFixed(2)} (${p.seqFirst ? 'seq first' : '1×2 first'}, load ${p.load.toFixed(1)})`).join(', ');
}
