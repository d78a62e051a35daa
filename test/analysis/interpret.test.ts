// Interpretation and table: recommendations follow the dominant factor and quote this run's numbers.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeSlow, formatSlowTable, interpretSlow } from '../../src/analysis/slow/index.js';
import { TB, chainAroundThreads, manifest } from './tb.js';

test('a sequential chain handed round the 4 threads: S dominates, "too sequential", blames the chain', () => {
  const tb = new TB(1);
  const t = chainAroundThreads(tb);
  const r = analyzeSlow(manifest(1, 4), tb.done(t));
  assert.ok(r.p.S > 70, `S = ${r.p.S}`);
  assert.ok(Math.abs(r.criticalPath.parallelism - 1) < 1e-9);
  assert.equal(r.criticalPath.cfs, 20);
  const text = interpretSlow(r).join('\n');
  assert.match(text, /dominant loss is starvation/);
  assert.match(text, /too sequential/);
  assert.match(text, /S = 7\d\.\d%/);
  assert.match(text, /`solve`/);
  const table = formatSlowTable(r);
  assert.match(table, /T_wall/);
  assert.match(table, /kireev2024/);
  assert.match(table, /critical path/);
});

test('transfers between nodes dominate: L recommendation names the node pair and the DF', () => {
  const tb = new TB(2);
  let t = 0;
  // seed 003 §5.3: two chains alternating between the nodes, so every DF crosses
  for (let i = 0; i < 10; i++) {
    for (const [chain, node] of [['B', i % 2], ['C', 1 - (i % 2)]] as const) {
      const cf = 2 * i + (chain === 'B' ? 1 : 2);
      tb.cf({ node, thread: 1, cf, label: 'step', start: t, end: t + 10, inputs: i > 0 ? [`${chain}[${i - 1}]`] : [] });
      tb.computed(node, `${chain}[${i}]`, cf, t + 10);
      tb.transfer(`${chain}[${i}]`, node, 1 - node, t + 11, t + 1100);
    }
    t += 1100;
  }
  const r = analyzeSlow(manifest(2, 1), tb.done(t));
  assert.ok(r.t.L > r.t.S && r.t.L > r.t.O, JSON.stringify(r.t));
  const text = interpretSlow(r).join('\n');
  assert.match(text, /dominant loss is latency/);
  assert.match(text, /transfers node [01] → [01]/);
  assert.match(text, /DFs `[BC]`/);
});

test('tiny CFs delayed by the runtime: O recommendation says the fragmentation is too fine', () => {
  const tb = new TB(1);
  let t = 0;
  for (let i = 0; i < 50; i++) { tb.cf({ node: 0, thread: 1, cf: i + 1, label: 'tiny', start: t + 90, end: t + 100 }); t += 100; }
  const r = analyzeSlow(manifest(1, 1), tb.done(t));
  assert.equal(r.p.O, 90);
  const text = interpretSlow(r).join('\n');
  assert.match(text, /dominant loss is runtime overhead/);
  assert.match(text, /too fine/);
  assert.doesNotMatch(text, /playback/, 'replaying a schedule does not remove per-CF runtime work');
});
