// Validation of the pattern engine on simulated SPMD programs written as real traces: each
// program injects one inefficiency alone (a late rank, a late exit, a lock held long) and the
// engine must report exactly that pattern — plus the complement the seed defines with it (an
// early gather leaves its root alone in the operation) — with its wasted time within 5 % of the
// injected delay, at the injected call site and ranks. The same programs without the injection
// report nothing above the noise threshold.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simulateSpmd, type Phase } from '../../src/analysis/sim/spmd.js';
import { analyzePatternsTrace } from '../../src/analysis/patterns/index.js';

const D = 5_000_000; // the injected delay: 5 ms
const R = 4;
const late = (who: number, d = D) => (r: number): number => (r === who ? d : 0);

interface Case {
  name: string;
  phases: (inject: boolean) => Phase[];
  pattern: string;
  site: string;
  /** rank → expected wasted (ns) */
  expect: Record<number, number>;
  /** other patterns the seed defines to accompany it */
  with?: string[];
}

const work: Phase = { compute: 1_000_000 };
const CASES: Case[] = [
  { name: 'a lock held long', pattern: 'lock_contention', site: 'v.ts:10:5', expect: { 1: D },
    phases: (i) => [work, { compute: late(1, 2_000) }, { lock: 1, ranks: [0, 1], hold: (r) => (r === 0 && i ? D + 2_000 : 1_000), site: 'v.ts:10:5' }, work] },
  { name: 'a late rank at an IN_ALLSYNC broadcast', pattern: 'entry_sync', site: 'v.ts:20:3', expect: { 0: D, 1: D, 3: D },
    phases: (i) => [work, { compute: late(2, i ? D : 0) }, { op: 'broadcast', root: 0, sync: { in: 'allsync' }, site: 'v.ts:20:3' }, work] },
  { name: 'a late exit from an OUT_ALLSYNC permute', pattern: 'exit_sync', site: 'v.ts:21:3', expect: { 0: D, 2: D, 3: D },
    phases: (i) => [work, { op: 'permute', sync: { out: 'allsync' }, exitDelay: late(1, i ? D : 0), site: 'v.ts:21:3' }, work] },
  { name: 'a late rank at a barrier', pattern: 'wait_at_barrier', site: 'v.ts:22:3', expect: { 0: D, 1: D, 2: D },
    phases: (i) => [work, { compute: late(3, i ? D : 0) }, { op: 'barrier', site: 'v.ts:22:3' }, work] },
  { name: 'a late exit from a barrier', pattern: 'barrier_completion', site: 'v.ts:23:3', expect: { 0: D, 1: D, 3: D },
    phases: (i) => [work, { op: 'barrier', exitDelay: late(2, i ? D : 0), site: 'v.ts:23:3' }, work] },
  { name: 'a late root of an IN_MYSYNC broadcast', pattern: 'late_broadcast', site: 'v.ts:24:3', expect: { 0: D, 2: D, 3: D },
    phases: (i) => [work, { compute: late(1, i ? D : 0) }, { op: 'broadcast', root: 1, sync: { in: 'mysync' }, site: 'v.ts:24:3' }, work] },
  { name: 'an early root of an IN_MYSYNC gather', pattern: 'early_gather', site: 'v.ts:25:3', expect: { 0: D }, with: ['wait_inside_collective'],
    phases: (i) => [work, { compute: (r) => (r !== 0 && i ? D : 0) }, { op: 'gather', root: 0, sync: { in: 'mysync' }, site: 'v.ts:25:3' }, work] },
  { name: 'a late rank 0 at an IN_MYSYNC prefix reduction', pattern: 'early_prefix_reduction', site: 'v.ts:26:3', expect: { 1: D, 2: D, 3: D },
    phases: (i) => [work, { compute: late(0, i ? D : 0) }, { op: 'prefix_reduce', sync: { in: 'mysync' }, site: 'v.ts:26:3' }, work] },
  { name: 'a late rank at an IN_MYSYNC gather_all', pattern: 'nxn_entry_sync', site: 'v.ts:27:3', expect: { 0: D, 1: D, 3: D },
    phases: (i) => [work, { compute: late(2, i ? D : 0) }, { op: 'gather_all', sync: { in: 'mysync' }, site: 'v.ts:27:3' }, work] },
  { name: 'a late exit from an OUT_MYSYNC exchange', pattern: 'nxn_exit_sync', site: 'v.ts:28:3', expect: { 0: D, 1: D, 2: D },
    phases: (i) => [work, { op: 'exchange', sync: { out: 'mysync' }, exitDelay: late(3, i ? D : 0), site: 'v.ts:28:3' }, work] },
  { name: 'a root alone in its IN_MYSYNC broadcast', pattern: 'wait_inside_collective', site: 'v.ts:29:3', expect: { 0: D },
    phases: (i) => [work, { op: 'broadcast', root: 0, sync: { in: 'mysync' }, exitDelay: late(0, i ? D : 0), site: 'v.ts:29:3' }, work] },
  { name: 'a late rank 0 at a collective allocation', pattern: 'wait_in_all_alloc', site: 'v.ts:30:3', expect: { 1: D, 2: D, 3: D },
    phases: (i) => [work, { compute: late(0, i ? D : 0) }, { op: 'all_alloc', site: 'v.ts:30:3' }, work] },
  { name: 'a late notify of a split-phase barrier', pattern: 'wait_at_barrier', site: 'v.ts:32:3', expect: { 0: D, 1: D, 3: D },
    phases: (i) => [work, { compute: late(2, i ? D : 0) }, { op: 'notify', site: 'v.ts:31:3' }, { op: 'wait', site: 'v.ts:32:3' }, work] },
];

function analyse(t: { after(fn: () => void): void }, phases: Phase[], nodes: number) {
  const dir = mkdtempSync(join(tmpdir(), 'luna-spmd-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  simulateSpmd(dir, { ranks: R, nodes, phases, jitter: 2_000, seed: 7 });
  return analyzePatternsTrace(dir);
}

for (const c of CASES) {
  test(`injected ${c.name}: ${c.pattern} alone, within 5 % of the delay, at its call site and ranks`, (t) => {
    const r = analyse(t, c.phases(true), 2);
    assert.deepEqual(r.warnings, []);
    assert.deepEqual(r.patterns.filter((p) => p.found).map((p) => p.id).sort(), [c.pattern, ...(c.with ?? [])].sort());
    const p = r.patterns.find((x) => x.id === c.pattern)!;
    assert.equal(p.sites[0]!.site, c.site);
    const got = new Map(p.sites[0]!.locations.map((l) => [l.label, l.wasted]));
    for (const [rank, ns] of Object.entries(c.expect)) {
      const w = got.get(`rank ${rank}`) ?? 0;
      assert.ok(Math.abs(w - ns) <= 0.05 * ns, `rank ${rank}: wasted ${w} ns, injected ${ns}`);
    }
    for (const [label, w] of got) if (!(label.slice(5) in c.expect)) assert.ok(w < 0.05 * D, `${label} charged ${w} ns though nothing was injected there`);
  });
}

test('the same programs without the injection: nothing above the noise threshold', (t) => {
  for (const c of CASES) {
    const r = analyse(t, c.phases(false), 1);
    assert.deepEqual(r.patterns.filter((p) => p.found).map((p) => `${p.id} ${p.wasted}`), [], c.name);
  }
});
