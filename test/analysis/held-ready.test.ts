// Starvation charged to producers that were ready and not started (held in another lane's batch
// or queue) is read as scheduling, not as a program too sequential; "not ready" keeps that reading.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { analyzeSlow, analyzeSlowTrace, interpretFindings, type SlowReport } from '../../src/analysis/slow/index.js';
import { TB, chainAroundThreads, manifest } from './tb.js';
import { CHAINED, HELD, writeHeldTrace } from './written.js';

const dir = mkdtempSync(join(tmpdir(), 'luna-held-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const kinds = (r: SlowReport): string[] => interpretFindings(r).map((f) => f.kind);
const textOf = (r: SlowReport, kind: string): string => interpretFindings(r).find((f) => f.kind === kind)?.text ?? '';

function written(chained: boolean): SlowReport {
  const d = join(dir, chained ? 'chained.trace' : 'held.trace');
  writeHeldTrace(d, { chained });
  return analyzeSlowTrace(d);
}

/** A report whose S charged to producers splits as `split` (shares of the charged total). */
function withSplit(r: SlowReport, split: { notReady: number; queued: number; running: number; unknown?: number }, charged = r.blame.starvation.total): SlowReport {
  const st = r.blame.starvation;
  const byProducerState = { notReady: split.notReady * charged, queued: split.queued * charged, running: split.running * charged, unknown: (split.unknown ?? 0) * charged };
  return { ...r, blame: { ...r.blame, starvation: { ...st, total: charged, byProducerState } } };
}

/** A chain handed round 4 threads: 1-way parallelism, S dominant, every producer charged. */
function chain(): SlowReport {
  const tb = new TB(1);
  return analyzeSlow(manifest(1, 4), tb.done(chainAroundThreads(tb)));
}

test('a written trace: the producer held behind another CF of its lane is "queued", and the finding says scheduling, not too sequential', () => {
  const r = written(false);
  assert.equal(r.t.S, HELD.S);
  assert.equal(r.blame.starvation.total, HELD.charged);
  assert.deepEqual(r.blame.starvation.byProducerState, { notReady: HELD.notReady, queued: HELD.queued, running: HELD.running, unknown: HELD.unknown });
  const k = kinds(r);
  assert.ok(k.includes('held-ready') && !k.includes('sequential'), k.join());
  const t = textOf(r, 'held-ready');
  assert.match(t, /^S = 47\.5%/);
  assert.match(t, /Of the 140 ns charged to producers, the producer was ready and not started for 90 ns \(64 ?%\), running for 50 ns, and never short of its inputs/);
  assert.match(t, /another lane's batch or queue/);
  assert.match(t, /more worker threads would not help/);
  assert.match(t, /`luna run --priorities-from TRACE`/);
  assert.doesNotMatch(t, /--distribution/, 'one node: a distribution cannot move CFs between its lanes');
  assert.doesNotMatch(t, /too sequential/);
});

test('the same trace with the producer waiting for its own input: "not ready", and the reading stays "too sequential"', () => {
  const r = written(true);
  assert.deepEqual(r.blame.starvation.byProducerState, { notReady: CHAINED.notReady, queued: CHAINED.queued, running: CHAINED.running, unknown: CHAINED.unknown });
  const k = kinds(r);
  assert.ok(k.includes('sequential') && !k.includes('held-ready'), k.join());
  assert.match(textOf(r, 'sequential'), /too sequential/);
});

test('synthetic splits of a 1-way chain: "queued" in the majority replaces "too sequential"; "not ready" in the majority keeps it', () => {
  const base = chain();
  assert.ok(base.criticalPath.parallelism < 1.01 && base.blame.starvation.total > 0.25 * base.t.S);
  const queued = withSplit(base, { notReady: 0.1, queued: 0.7, running: 0.2 });
  assert.ok(kinds(queued).includes('held-ready') && !kinds(queued).includes('sequential'), kinds(queued).join());
  assert.match(textOf(queued, 'held-ready'), /\(70 ?%\)/);
  assert.match(textOf(queued, 'held-ready'), /The graph itself offers 1\.0-way parallelism/);
  assert.match(textOf({ ...queued, nodes: 2 }, 'held-ready'), /another placement of the producers over the nodes \(`--distribution` with a distribution file\)/);
  const notReady = withSplit(base, { notReady: 0.7, queued: 0.1, running: 0.2 });
  assert.ok(kinds(notReady).includes('sequential') && !kinds(notReady).includes('held-ready'), kinds(notReady).join());
});

test('the thresholds: "queued" must be a majority of the charged S, and the charged S a quarter of S or more', () => {
  const base = chain();
  // exactly half is not a majority
  assert.ok(!kinds(withSplit(base, { notReady: 0.2, queued: 0.5, running: 0.3 })).includes('held-ready'));
  assert.ok(kinds(withSplit(base, { notReady: 0.2, queued: 0.51, running: 0.29 })).includes('held-ready'));
  // all of it queued, but charged to producers only a fifth of S: the split does not speak for S
  const small = withSplit(base, { notReady: 0, queued: 1, running: 0 }, 0.2 * base.t.S);
  assert.ok(!kinds(small).includes('held-ready') && kinds(small).includes('sequential'), kinds(small).join());
  assert.ok(kinds(withSplit(base, { notReady: 0, queued: 1, running: 0 }, 0.3 * base.t.S)).includes('held-ready'));
});

test('a worker thread that ran nothing: "less parallelism than threads" only when the producers were mostly not ready; held ready, the handing out is named', () => {
  const base = chain();
  const idle = (r: SlowReport): SlowReport => ({ ...r, placement: { ...r.placement, idleThreads: [{ node: 0, thread: 4 }], startupNs: 0 } });
  const notReady = idle(withSplit(base, { notReady: 0.7, queued: 0.1, running: 0.2 }));
  assert.match(textOf(notReady, 'idle-threads'), /less parallelism than threads/);
  const queued = idle(withSplit(base, { notReady: 0.1, queued: 0.7, running: 0.2 }));
  const t = textOf(queued, 'idle-threads');
  assert.doesNotMatch(t, /less parallelism than threads/);
  assert.match(t, /handed the CFs to the other workers/);
});
