// The pattern engine on hand-built event sequences: each figure of seed 001 (Fig. 2–5) and each
// of its twelve patterns with the wasted time its formula gives, the states and pointers
// (nested regions, lock history, the collective queue), misuse in the events, and agreement with
// Scalasca's formulas where the patterns are shared.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PatternEngine } from '../../src/analysis/patterns/engine.js';
import { PatternResults } from '../../src/analysis/patterns/results.js';
import { PATTERNS, P, type PatternId } from '../../src/analysis/patterns/catalog.js';
import { barrierCompletion, earlyReduce, lateBroadcast, waitAtBarrier } from '../../src/analysis/patterns/scalasca.js';
import { SPMD_OPS } from '../../src/trace/schema.js';

const op = (name: (typeof SPMD_OPS)[number]): number => SPMD_OPS.indexOf(name);
const NO = 0, MY = 1, ALL = 2;
const sync = (i: number, o: number): number => i + 4 * o;

type Ev =
  | { k: 'E'; t: number; r: number; op: number; site: string }
  | { k: 'X'; t: number; r: number; op: number }
  | { k: 'C'; t: number; r: number; op: number; seq: number; root: number; sync: number }
  | { k: 'A' | 'R'; t: number; r: number; lock: number };

/** One collective: each rank enters at enters[r] (at `site`) and leaves at exits[r]. */
function coll(name: (typeof SPMD_OPS)[number], seq: number, enters: number[], exits: number[], o: { root?: number; sync?: number; site?: string } = {}): Ev[] {
  const out: Ev[] = [];
  enters.forEach((t, r) => out.push({ k: 'E', t, r, op: op(name), site: o.site ?? `prog.ts:${10 + seq}:3` }));
  exits.forEach((t, r) => out.push({ k: 'C', t, r, op: op(name), seq, root: o.root ?? -1, sync: o.sync ?? 0 }));
  return out;
}

function run(ranks: number, evs: Ev[], peer?: (p: number, enter: Float64Array, exit: Float64Array, root: number, seed: number) => void) {
  const res = new PatternResults(() => ranks);
  const eng = new PatternEngine(ranks, res);
  if (peer) eng.peer = (p, c, seed) => peer(p, c.enter, c.exit, c.root, seed);
  // the engine takes events in time order (stable: ties keep their order here)
  for (const e of [...evs].map((e, i) => [e, i] as const).sort((a, b) => a[0].t - b[0].t || a[1] - b[1]).map((x) => x[0])) {
    switch (e.k) {
      case 'E': eng.enter(e.r, e.t, e.op, res.site(e.site)); break;
      case 'X': eng.exit(e.r, e.t, e.op); break;
      case 'C': eng.cexit(e.r, e.t, e.op, e.seq, e.root, e.sync); break;
      case 'A': eng.alock(e.r, e.t, e.lock); break;
      case 'R': eng.rlock(e.r, e.t, e.lock); break;
    }
  }
  eng.end();
  const tree = res.tree((_p, l) => `rank ${l}`, () => 0);
  const found = (): PatternId[] => tree.map((n) => n.id).sort();
  const per = (id: PatternId): number[] => [...res.perLocation(P[id])];
  return { res, eng, tree, found, per };
}

test('Fig. 2, lock contention: r = a.lockptr, e = a.enterptr, wasted r.time − e.time for the waiting rank', () => {
  const L = 7;
  const { per, found, tree } = run(2, [
    { k: 'E', t: 0, r: 0, op: op('lock'), site: 'a.ts:5:1' }, { k: 'A', t: 1, r: 0, lock: L }, { k: 'X', t: 2, r: 0, op: op('lock') },
    { k: 'E', t: 3, r: 1, op: op('lock'), site: 'a.ts:5:1' }, // e: rank 1 asks while rank 0 holds it
    { k: 'E', t: 10, r: 0, op: op('unlock'), site: 'a.ts:9:1' }, { k: 'R', t: 11, r: 0, lock: L }, { k: 'X', t: 12, r: 0, op: op('unlock') },
    { k: 'A', t: 11.5, r: 1, lock: L }, { k: 'X', t: 12, r: 1, op: op('lock') },
    { k: 'E', t: 13, r: 1, op: op('unlock'), site: 'a.ts:9:1' }, { k: 'R', t: 14, r: 1, lock: L }, { k: 'X', t: 15, r: 1, op: op('unlock') },
    // rank 0 asks again after the release: lockptr is rank 1's release, before its enter: no contention
    { k: 'E', t: 20, r: 0, op: op('lock'), site: 'a.ts:5:1' }, { k: 'A', t: 21, r: 0, lock: L }, { k: 'X', t: 22, r: 0, op: op('lock') },
  ]);
  assert.deepEqual(found(), ['lock_contention']);
  assert.deepEqual(per('lock_contention'), [0, 8]);
  assert.equal(tree[0]!.sites[0]!.site, 'a.ts:5:1', 'charged at the lock call of the waiting rank');
  assert.equal(tree[0]!.count, 1);
});

test('lock contention: another lock, or an acquisition before the release entered, is no contention', () => {
  const { found } = run(2, [
    { k: 'E', t: 0, r: 0, op: op('lock'), site: 's' }, { k: 'A', t: 1, r: 0, lock: 1 }, { k: 'X', t: 1, r: 0, op: op('lock') },
    { k: 'E', t: 2, r: 1, op: op('lock'), site: 's' }, { k: 'A', t: 3, r: 1, lock: 2 }, { k: 'X', t: 3, r: 1, op: op('lock') },
    { k: 'E', t: 4, r: 0, op: op('unlock'), site: 's' }, { k: 'R', t: 4, r: 0, lock: 1 }, { k: 'X', t: 4, r: 0, op: op('unlock') },
    { k: 'E', t: 5, r: 1, op: op('lock'), site: 's' }, { k: 'A', t: 6, r: 1, lock: 1 }, { k: 'X', t: 6, r: 1, op: op('lock') },
  ]);
  assert.deepEqual(found(), []);
});

test('Fig. 3a, entry synchronisation (IN_ALLSYNC): Σ max(E2.time) − e.time over the enters', () => {
  const { per, found } = run(4, coll('broadcast', 0, [0, 2, 5, 3], [6, 6, 6, 6], { root: 0, sync: sync(ALL, NO) }));
  assert.deepEqual(found(), ['entry_sync']);
  assert.deepEqual(per('entry_sync'), [5, 3, 0, 2]);
});

test('Fig. 3b, exit synchronisation (OUT_ALLSYNC): Σ max(E1.time) − e.time over the exits', () => {
  const { per, found } = run(4, coll('permute', 0, [0, 0, 0, 0], [6, 7, 9, 6], { sync: sync(NO, ALL) }));
  assert.deepEqual(found(), ['exit_sync']);
  assert.deepEqual(per('exit_sync'), [3, 2, 0, 3]);
});

test('wait at barrier and barrier completion: the enters, then the exits', () => {
  const { per, found } = run(3, coll('barrier', 0, [1, 4, 2], [4.5, 4.25, 4.25]));
  assert.deepEqual(found(), ['barrier_completion', 'wait_at_barrier']);
  assert.deepEqual(per('wait_at_barrier'), [3, 0, 2]);
  assert.deepEqual(per('barrier_completion'), [0, 0.25, 0.25]);
});

test('Fig. 4a, late broadcast (IN_MYSYNC): the ranks that entered before the root wait for it', () => {
  const { per, found } = run(4, coll('broadcast', 0, [0, 1, 5, 2], [6, 6, 6, 6], { root: 2, sync: sync(MY, NO) }));
  assert.deepEqual(found(), ['late_broadcast'], 'the root is never alone: no wait inside');
  assert.deepEqual(per('late_broadcast'), [5, 4, 0, 3]);
});

test('late broadcast applies to scatter, not to a NOSYNC broadcast', () => {
  assert.deepEqual(run(2, coll('scatter', 0, [0, 3], [4, 4], { root: 1, sync: sync(MY, NO) })).per('late_broadcast'), [3, 0]);
  assert.deepEqual(run(2, coll('broadcast', 0, [0, 3], [4, 4], { root: 1, sync: sync(NO, NO) })).found(), []);
});

test('Fig. 4b, early gather (IN_MYSYNC): the root entered first and waits for the last sender; alone until the first', () => {
  const { per, found } = run(4, coll('gather', 0, [0, 3, 4, 6], [8, 7, 7, 7], { root: 0, sync: sync(MY, NO) }));
  assert.deepEqual(found(), ['early_gather', 'wait_inside_collective']);
  assert.deepEqual(per('early_gather'), [6, 0, 0, 0]);
  assert.deepEqual(per('wait_inside_collective'), [3 + 1, 0, 0, 0], 'alone on [0, 3) and [7, 8)');
});

test('early gather applies to reduce; a root that entered last waits for nobody', () => {
  assert.deepEqual(run(3, coll('reduce', 0, [0, 1, 2], [3, 3, 3], { root: 1, sync: sync(MY, NO) })).per('early_gather'), [0, 1, 0]);
  assert.deepEqual(run(3, coll('reduce', 0, [0, 1, 2], [3, 3, 3], { root: 2, sync: sync(MY, NO) })).found(), []);
});

test('Fig. 5a, early prefix reduction: each rank waits for the latest enter among the lower ranks', () => {
  const { per, found } = run(4, coll('prefix_reduce', 0, [4, 1, 6, 2], [7, 7, 7, 7], { sync: sync(MY, NO) }));
  assert.deepEqual(found(), ['early_prefix_reduction']);
  assert.deepEqual(per('early_prefix_reduction'), [0, 3, 0, 4]);
});

test('Fig. 5b, wait inside a collective: the root\'s time less the union of the others\' (s3 − e2) + (s0 − e1)', () => {
  // s2 < s4 < e2 < s3 < s1 < e3 < e1 < s0 < e4 < e0; root = 4
  const s = [10, 5, 0, 4, 1], e = [14, 8, 2, 7, 12];
  const { per, found } = run(5, coll('broadcast', 0, s, e, { root: 4, sync: sync(MY, NO) }));
  assert.deepEqual(per('wait_inside_collective'), [0, 0, 0, 0, (4 - 2) + (10 - 8)]);
  assert.ok(found().includes('wait_inside_collective'));
  assert.deepEqual(per('late_broadcast'), [0, 0, 0, 0, 0].map((_, r) => Math.max(0, 1 - s[r]!)) , 'rank 2 entered before the root');
});

test('many-to-many synchronisation at entry (IN_MYSYNC) and at exit (OUT_MYSYNC): gather_all and exchange', () => {
  const a = run(3, coll('gather_all', 0, [0, 2, 5], [6, 6, 8], { sync: sync(MY, MY) }));
  assert.deepEqual(a.found(), ['nxn_entry_sync', 'nxn_exit_sync']);
  assert.deepEqual(a.per('nxn_entry_sync'), [5, 3, 0]);
  assert.deepEqual(a.per('nxn_exit_sync'), [2, 2, 0]);
  const b = run(2, coll('exchange', 0, [0, 1], [2, 2], { sync: sync(MY, NO) }));
  assert.deepEqual(b.per('nxn_entry_sync'), [1, 0]);
  const c = run(2, coll('exchange', 0, [0, 1], [2, 3], { sync: sync(ALL, ALL) }));
  assert.deepEqual(c.found(), ['entry_sync', 'exit_sync'], 'ALLSYNC is the general entry/exit synchronisation');
});

test('wait in collective allocation: the ranks that entered before rank 0', () => {
  const { per, found } = run(3, coll('all_alloc', 0, [5, 1, 2], [6, 6, 6], { root: 0 }));
  assert.deepEqual(found(), ['wait_in_all_alloc']);
  assert.deepEqual(per('wait_in_all_alloc'), [0, 4, 3]);
});

test('split-phase barrier: the wait waits for the last notify (at most until it left); completion on the waits\' exits', () => {
  const evs = [
    ...coll('notify', 0, [0, 4, 1], [0.1, 4.1, 1.1], { site: 'n.ts:1:1' }),
    ...coll('wait', 1, [1, 4.5, 6], [4.2, 4.6, 6.1], { site: 'n.ts:2:1' }),
  ];
  const { per, found, tree } = run(3, evs);
  assert.deepEqual(found(), ['barrier_completion', 'wait_at_barrier']);
  assert.deepEqual(per('wait_at_barrier'), [3, 0, 0]);
  assert.equal(tree.find((n) => n.id === 'wait_at_barrier')!.sites[0]!.site, 'n.ts:2:1', 'charged at the wait');
  assert.deepEqual(per('barrier_completion').map((x) => +x.toFixed(9)), [1.9, 1.5, 0]);
});

test('states: enterptr is the innermost operation (nested regions); a CExit leaves the stack as it was', () => {
  const evs: Ev[] = [
    { k: 'E', t: 0, r: 0, op: op('region'), site: 'sort' }, { k: 'E', t: 0, r: 1, op: op('region'), site: 'sort' },
    ...coll('barrier', 0, [1, 3], [3, 3], { site: 'in-sort' }),
    { k: 'X', t: 4, r: 0, op: op('region') }, { k: 'X', t: 4, r: 1, op: op('region') },
    ...coll('barrier', 1, [5, 9], [9, 9], { site: 'after' }),
  ];
  const { tree, eng } = run(2, evs);
  const w = tree.find((n) => n.id === 'wait_at_barrier')!;
  assert.deepEqual(w.sites.map((s) => [s.site, s.wasted]), [['after', 4], ['in-sort', 2]], 'worst site first, each at its own call');
  assert.equal(eng.problems.unmatchedExits, 0);
});

test('states: regions nested deeper than the stacks were made for, and ranks added while operations are open, keep every enterptr', () => {
  // 40 nested regions on each of 2 ranks, then a barrier inside them: its enters are the innermost
  const evs: Ev[] = [];
  for (let d = 0; d < 40; d++) for (let r = 0; r < 2; r++) evs.push({ k: 'E', t: d, r, op: op('region'), site: `depth${d}` });
  evs.push(...coll('barrier', 0, [100, 130], [130, 130], { site: 'deep' }));
  for (let d = 39; d >= 0; d--) for (let r = 0; r < 2; r++) evs.push({ k: 'X', t: 200 + 39 - d, r, op: op('region') });
  const { tree, eng } = run(2, evs);
  assert.deepEqual(tree.find((n) => n.id === 'wait_at_barrier')!.sites.map((s) => [s.site, s.wasted]), [['deep', 30]]);
  assert.equal(eng.problems.unmatchedExits, 0);

  // an engine made for 1 rank grows to 3 while rank 0 is inside a region: the region and the lock call stay its enterptrs
  const res = new PatternResults(() => 3);
  const g = new PatternEngine(1, res);
  g.enter(0, 0, op('region'), res.site('outer'));
  g.enter(0, 1, op('lock'), res.site('lock-call'));
  g.alock(0, 2, 7);
  g.exit(0, 2, op('lock'));
  g.grow(3);
  g.enter(2, 3, op('lock'), res.site('lock-call-2'));
  g.enter(0, 4, op('unlock'), res.site('unlock'));
  g.rlock(0, 9, 7);
  g.exit(0, 9, op('unlock'));
  g.alock(2, 9, 7);
  g.exit(2, 9, op('lock'));
  g.exit(0, 10, op('region'));
  g.end();
  assert.deepEqual([...res.perLocation(P.lock_contention)], [0, 0, 6], 'rank 2 waited from its lock call at 3 to the release at 9');
  assert.equal(g.problems.unmatchedExits, 0, 'rank 0\'s region survived the growth');
});

test('the collective queue pairs by sequence, whatever the order the exits arrive in', () => {
  // rank 1 leaves the NOSYNC broadcast #0 late, after rank 0 already left barrier #1
  const evs = [
    ...coll('broadcast', 0, [0, 0], [1, 7], { root: 0, sync: sync(NO, NO) }),
    ...coll('barrier', 1, [2, 8], [8, 8]),
  ];
  const { per, eng } = run(2, evs);
  assert.deepEqual(per('wait_at_barrier'), [6, 0]);
  assert.equal(eng.collectives, 2);
});

test('the queue holds any number of collectives in flight (a rank 100 NOSYNC collectives behind the other)', () => {
  const evs: Ev[] = [];
  for (let k = 0; k < 100; k++) evs.push(...coll('broadcast', k, [k, 1000 + k], [k + 0.5, 1000 + k + 0.5], { root: 0, sync: sync(NO, NO) }));
  evs.push(...coll('barrier', 100, [100, 1200], [1200, 1200]));
  const { per, eng } = run(2, evs);
  assert.equal(eng.collectives, 101);
  assert.equal(eng.problems.incomplete, 0);
  assert.deepEqual(per('wait_at_barrier'), [1100, 0]);
});

test('misuse in the events: mismatched collectives, exits without enters, collectives never left are counted, not analysed', () => {
  const evs: Ev[] = [
    ...coll('barrier', 0, [0, 5], [5, 5]).filter((e) => e.r === 0),
    ...coll('broadcast', 0, [0, 5], [5, 5], { root: 1, sync: sync(MY, NO) }).filter((e) => e.r === 1),
    { k: 'X', t: 6, r: 0, op: op('lock') },
    ...coll('barrier', 1, [7, 8], [9, 9]).filter((e) => e.r === 0),
  ];
  const { found, eng } = run(2, evs);
  assert.deepEqual(found(), []);
  assert.equal(eng.problems.mismatched, 1);
  assert.deepEqual(eng.problems.firstMismatch, { seq: 0, rank: 1, op: 'broadcast', expected: 'barrier' });
  assert.equal(eng.problems.unmatchedExits, 1);
  assert.equal(eng.problems.incomplete, 1);
});

test('results tree: pattern → call site → rank, worst first at every level', () => {
  const evs = [
    ...coll('barrier', 0, [0, 1, 9], [9, 9, 9], { site: 'x.ts:1:1' }),
    ...coll('barrier', 1, [10, 12, 11], [12, 12, 12], { site: 'x.ts:2:1' }),
    ...coll('all_alloc', 2, [20, 13, 14], [21, 21, 21], { root: 0, site: 'x.ts:3:1' }),
  ];
  const { tree } = run(3, evs);
  assert.deepEqual(tree.map((n) => [n.id, n.wasted]), [['wait_at_barrier', 9 + 8 + 2 + 1], ['wait_in_all_alloc', 7 + 6]]);
  const w = tree[0]!;
  assert.deepEqual(w.sites.map((s) => s.site), ['x.ts:1:1', 'x.ts:2:1']);
  assert.deepEqual(w.sites[0]!.locations.map((l) => [l.label, l.wasted]), [['rank 0', 9], ['rank 1', 8]]);
  assert.equal(w.count, 2, 'two barriers wasted time');
});

test('every pattern of the catalog has a test above that finds it', () => {
  const spmd = PATTERNS.filter((p) => p.model === 'spmd').map((p) => p.id);
  assert.equal(spmd.length, 12, 'the twelve patterns of seed 001');
});

// ------------------------------------------------------------------ Scalasca

test('Scalasca agrees with the seed on synchronising collectives (no rank leaves before the last enters)', () => {
  const sums = new Map<number, [number, number]>();
  const peer = (p: number, enter: Float64Array, exit: Float64Array, root: number, seed: number): void => {
    const out = new Float64Array(enter.length);
    if (p === P.wait_at_barrier || p === P.nxn_entry_sync || p === P.entry_sync) waitAtBarrier(enter, exit, out);
    else if (p === P.late_broadcast) lateBroadcast(enter, exit, root, out);
    else if (p === P.early_gather) earlyReduce(enter, exit, root, out);
    else if (p === P.barrier_completion) barrierCompletion(exit, out);
    const s = sums.get(p) ?? [0, 0];
    s[0] += seed; s[1] += out.reduce((a, b) => a + b, 0);
    sums.set(p, s);
  };
  // random synchronising instances: every exit after the latest enter (after the root's for one-to-many)
  let x = 12345;
  const rnd = (): number => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const evs: Ev[] = [];
  let t = 0;
  for (let seq = 0; seq < 200; seq++) {
    const n = 4, enters = Array.from({ length: n }, () => t + 100 * rnd());
    const last = Math.max(...enters);
    const kind = seq % 4;
    const root = seq % n;
    const exits = enters.map(() => last + 1 + 5 * rnd());
    if (kind === 0) evs.push(...coll('barrier', seq, enters, exits));
    else if (kind === 1) evs.push(...coll('gather_all', seq, enters, exits, { sync: sync(MY, NO) }));
    else if (kind === 2) evs.push(...coll('broadcast', seq, enters, exits, { root, sync: sync(MY, NO) }));
    else evs.push(...coll('reduce', seq, enters, enters.map((e, r) => (r === root ? last + 2 : e + 0.5 + rnd() * (last - e))), { root, sync: sync(MY, NO) }));
    t = Math.max(...exits, last + 2) + 1;
  }
  run(4, evs, peer);
  for (const p of [P.wait_at_barrier, P.nxn_entry_sync, P.late_broadcast, P.early_gather]) {
    const [seed, sc] = sums.get(p)!;
    assert.ok(seed > 0, `${PATTERNS[p]!.id} occurred`);
    assert.ok(Math.abs(seed - sc) < 1e-6 * seed, `${PATTERNS[p]!.id}: seed ${seed} vs Scalasca ${sc}`);
  }
  // barrier completion: the same skew, charged the other way round (to the ranks that left first / last)
  const [bs, bc] = sums.get(P.barrier_completion)!;
  assert.ok(bs > 0 && bc > 0);
});

test('Scalasca and the seed differ where a rank leaves before the last one entered (no synchronisation): the seed counts up to the last enter', () => {
  const enter = new Float64Array([0, 10]), exit = new Float64Array([2, 12]);
  assert.deepEqual([...waitAtBarrier(enter, exit, new Float64Array(2))], [2, 0], 'Scalasca stops at the own exit');
  const { per } = run(2, coll('gather_all', 0, [0, 10], [2, 12], { sync: sync(MY, NO) }));
  assert.deepEqual(per('nxn_entry_sync'), [10, 0], 'the seed: max(E2.time) − e.time');
});
