// xSeq of the pic bench from pairs of runs side by side (bench/pic-xseq.ts): the median of each
// pair's own ratio, so that a sequential reference slowed by load is divided into a 1 × 2 run that
// met the same load, and the two sides take turns at going first.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { alternatePairs, pairsNote, summarize, type XSeqPair } from '../../bench/pic-xseq.js';

const pair = (seqSecs: number, runSecs: number): XSeqPair => ({ seqSecs, runSecs, load: 1, seqFirst: true });

test('xSeq is the median of the pairs\' ratios, not the ratio of the medians', () => {
  // the load tripled the second pair's both runs: its ratio is the first's; the third pair is the outlier
  const x = summarize([pair(1, 0.5), pair(3, 1.5), pair(2, 1.5)]);
  assert.equal(x.xSeq, 2);
  assert.notEqual(x.xSeq, 2 / 1.5, 'the ratio of the medians (sequential 2 s, 1 × 2 1.5 s)');
  assert.equal(x.min, 2 / 1.5);
  assert.equal(x.max, 2);
  assert.deepEqual([x.seqSecs, x.seqMinSecs, x.seqMaxSecs, x.pairs], [2, 1, 3, 3]);
  // the fastest sequential run (1 s) over the fastest 1 × 2 one (0.5 s), from different pairs
  assert.deepEqual([x.runMinSecs, x.fastest], [0.5, 2]);
  assert.equal(summarize([pair(2, 1), pair(1.5, 1.2)]).fastest, 1.5);
});

test('the pairs run side by side, the sequential side first in every other pair', async () => {
  const order: string[] = [];
  let t = 0;
  const pairs = await alternatePairs(4, async () => { order.push('seq'); return 2 + t++; }, async () => { order.push('run'); return 1; }, () => 3);
  assert.deepEqual(order, ['seq', 'run', 'run', 'seq', 'seq', 'run', 'run', 'seq']);
  assert.deepEqual(pairs.map((p) => p.seqFirst), [true, false, true, false]);
  assert.deepEqual(pairs.map((p) => p.seqSecs), [2, 3, 4, 5]);
  assert.ok(pairs.every((p) => p.load === 3 && p.runSecs === 1));
  assert.match(pairsNote(pairs), /^2\.00 \(seq first, load 3\.0\), 3\.00 \(1×2 first, load 3\.0\)/);
});

test('no pairs is an error, not a NaN figure', () => {
  assert.throws(() => summarize([]), /no xSeq pairs/);
});
