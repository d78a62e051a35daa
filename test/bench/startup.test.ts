// The start-up bench's reading of V8's --trace-opt output beside a chain's printed links
// (bench/startup.ts): the first mark and the first optimisation of each hot function, at the
// last link printed before it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tieringLinks } from '../../bench/startup.js';

test('tiering links: the first mark and optimisation of each hot function, at the link printed before it; other functions ignored', () => {
  const out = [
    '[marking 0x1 <JSFunction callUcode (sfi = 0x2)> for optimization to TURBOFAN, ConcurrencyMode::kConcurrent, reason: hot and stable]',
    'luna-link 0',
    'luna-link 250',
    '[marking 0x3 <JSFunction examine (sfi = 0x4)> for optimization to TURBOFAN, ConcurrencyMode::kConcurrent, reason: hot and stable]',
    '[marking 0x5 <JSFunction normalizeString (sfi = 0x6)> for optimization to TURBOFAN, ConcurrencyMode::kConcurrent, reason: hot and stable]',
    'luna-link 500',
    '[completed optimizing 0x3 <JSFunction examine (sfi = 0x4)> (target TURBOFAN)]',
    '[completed optimizing 0x1 <JSFunction callUcode (sfi = 0x2)> (target TURBOFAN)]',
    'luna-link 750',
    '[marking 0x3 <JSFunction examine (sfi = 0x4)> for optimization to TURBOFAN, ConcurrencyMode::kConcurrent, reason: hot and stable]',
    '[completed optimizing 0x3 <JSFunction examine (sfi = 0x4)> (target TURBOFAN)]',
  ].join('\n');
  const { marked, optimised } = tieringLinks(out);
  assert.deepEqual([...marked], [['callUcode', 0], ['examine', 250]]);
  assert.deepEqual([...optimised], [['examine', 500], ['callUcode', 500]]);
  assert.equal(tieringLinks('luna-link 0\nluna-link 250\n').marked.size, 0);
});
