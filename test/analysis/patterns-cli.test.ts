// `luna analyze patterns` and the report's Patterns section on a simulated SPMD trace with a late
// rank at a barrier: the text tree, JSON for scripts (with Scalasca's formulas beside the
// seed's), the same tree on the page, and clear messages for bad input.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simulateSpmd } from '../../src/analysis/sim/spmd.js';
import type { PatternReport } from '../../src/analysis/patterns/index.js';
import { luna } from '../cli/helpers.js';

function trace(t: { after(fn: () => void): void }): { dir: string; trace: string } {
  const dir = mkdtempSync(join(tmpdir(), 'luna-patterns-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const tr = join(dir, 'run.trace');
  simulateSpmd(tr, {
    ranks: 3, nodes: 1, phases: [
      { compute: (r) => (r === 2 ? 4_000_000 : 1_000_000) }, { op: 'barrier', site: 'is.ts:42:7' },
      { compute: 100_000 }, { op: 'broadcast', root: 0, sync: { in: 'mysync' }, site: 'is.ts:50:3' },
    ],
  });
  return { dir, trace: tr };
}

test('luna analyze patterns: the tree as text and as JSON, Scalasca beside the seed', async (t) => {
  const { dir, trace: tr } = trace(t);
  const txt = await luna(['analyze', 'patterns', tr], dir);
  assert.equal(txt.status, 0, txt.stderr);
  assert.match(txt.stdout, /Wait at barrier \(1×\)/);
  assert.match(txt.stdout, /is\.ts:42:7\n\s+3\.000 ms\s+rank 0\n\s+3\.000 ms\s+rank 1/);
  assert.match(txt.stdout, /What to change:/);
  const js = await luna(['analyze', 'patterns', '--json', '--compare', tr], dir);
  assert.equal(js.status, 0, js.stderr);
  const r = JSON.parse(js.stdout) as PatternReport;
  assert.equal(r.ranks, 3);
  assert.equal(r.patterns[0]!.id, 'wait_at_barrier');
  assert.equal(r.patterns[0]!.wasted, 6_000_000);
  assert.deepEqual(r.patterns[0]!.sites[0]!.locations.map((l) => [l.label, l.wasted]), [['rank 0', 3_000_000], ['rank 1', 3_000_000]]);
  const c = r.comparison!.find((x) => x.pattern === 'wait_at_barrier')!;
  assert.equal(c.scalasca, 'Wait at Barrier');
  assert.equal(c.seedNs, c.scalascaNs);
});

test('luna report: a Patterns section with the same tree', async (t) => {
  const { dir, trace: tr } = trace(t);
  const out = join(dir, 'r.html');
  const r = await luna(['report', tr, '-o', out], dir);
  assert.equal(r.status, 0, r.stderr);
  const html = readFileSync(out, 'utf8');
  assert.ok(html.includes('<section id="patterns">'));
  assert.match(html, /data-pattern="wait_at_barrier"><summary><b>Wait at barrier<\/b> — 6\.000 ms/);
  assert.match(html, /is\.ts:42:7<\/summary><table><tbody><tr><td>rank 0<\/td><td class="n">3\.000 ms/);
});

test('bad input: not a trace, a bad quantum: a message and a non-zero exit, no stack trace', async (t) => {
  const { dir } = trace(t);
  const a = await luna(['analyze', 'patterns', join(dir, 'nope')], dir);
  assert.notEqual(a.status, 0);
  assert.doesNotMatch(a.stderr, /\n\s+at .+:\d+:\d+/);
  assert.match(a.stderr, /nope/);
  const b = await luna(['analyze', 'patterns', '--quantum', 'soon', join(dir, 'run.trace')], dir);
  assert.equal(b.status, 2);
  assert.match(b.stderr, /--quantum/);
});
