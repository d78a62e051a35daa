// The balancer's profile read straight from the trace's columns (read-columns.ts) against the
// trace model's reading of the same trace (profileOf): equal on a generated trace and on a
// hand-built one with the cases the model resolves (a CF shipped twice, a DF relayed, a CF that
// never started). Real traces: test/cli/balance.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { profileOf, readProfile, type Profile } from '../../src/analysis/balance/profile.js';
import { nameList } from '../../src/analysis/balance/names.js';
import { syntheticEvents, syntheticManifest } from '../../src/analysis/sim/synthetic.js';
import { writeSimTrace } from '../../src/analysis/sim/write.js';
import { readTrace } from '../../src/trace/merge.js';
import type { TraceEvent } from '../../src/trace/schema.js';
import { assertSameProfile } from './same-profile.js';

function inTemp<T>(f: (dir: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), 'luna-balance-profile-'));
  try { return f(dir); } finally { rmSync(dir, { recursive: true, force: true }); }
}

function both(dir: string): [Profile, Profile] {
  const tr = readTrace(dir);
  return [readProfile(dir), profileOf(tr.manifest, tr.events)];
}

test('the columnar profile equals the trace model\'s on a generated trace (4 nodes × 3 lanes, transfers every other step)', () => {
  inTemp((dir) => {
    const o = { events: 30_000, nodes: 4, threads: 3, seed: 7 };
    writeSimTrace(dir, syntheticManifest(o), syntheticEvents(o));
    const [a, b] = both(dir);
    assert.ok(a.n > 2000 && a.dfs > 2000 && a.xferBytes.length > 500 && a.depFrom.length > 2000, `${a.n} CFs, ${a.dfs} DFs, ${a.xferBytes.length} hops`);
    assertSameProfile(a, b);
    assert.deepEqual(Array.from(a.spawn!), Array.from(a.node), 'nothing was shipped: each CF ran where it was spawned');
  });
});

test('the columnar profile on hand-built records: a CF shipped twice keeps its spawning node; a DF relayed through a node; a CF without a start', () => {
  const M = { ...syntheticManifest({ events: 0, nodes: 3, threads: 1 }) };
  const ev: TraceEvent[] = [];
  const at = (t: number, node: number, thread: number, e: Record<string, unknown>): void => { ev.push({ t, node, thread, ...e } as unknown as TraceEvent); };
  for (let n = 0; n < 3; n++) at(0, n, 0, { kind: 'programStart' });
  // a: spawned and run on node 0, writes x (100 bytes)
  at(10, 0, 0, { kind: 'cfCreated', cf: 1, parentCf: -1, site: 0, gid: 'a', labelIdx: [] });
  at(20, 0, 1, { kind: 'cfStart', cpu: 0, cf: 1, lane: 1 });
  at(120, 0, 1, { kind: 'cfFinish', cpu: 90, cf: 1, lane: 1 });
  at(125, 0, 0, { kind: 'dfName', df: 1, name: 'x' });
  at(125, 0, 0, { kind: 'dfComputed', df: 1, producerCf: 1, bytes: 100 });
  // b: spawned on node 0, shipped to node 1, then on to node 2, where it reads x (relayed 0 → 1 → 2)
  at(30, 0, 0, { kind: 'cfCreated', cf: 2, parentCf: -1, site: 1, gid: 'b', labelIdx: [] });
  at(40, 0, 0, { kind: 'cfMigrate', cf: 2, toNode: 1 });
  at(60, 1, 0, { kind: 'cfReceive', cf: 7, fromNode: 0, remoteCf: 2, site: 1, gid: 'b', labelIdx: [] });
  at(70, 1, 0, { kind: 'cfMigrate', cf: 7, toNode: 2 });
  at(90, 2, 0, { kind: 'cfReceive', cf: 3, fromNode: 1, remoteCf: 7, site: 1, gid: 'b', labelIdx: [] });
  at(130, 0, 0, { kind: 'dfSendStart', df: 1, toNode: 1, bytes: 100 });
  at(140, 0, 0, { kind: 'dfSendEnd', df: 1, toNode: 1 });
  at(200, 1, 0, { kind: 'dfName', df: 4, name: 'x' });
  at(200, 1, 0, { kind: 'dfReceive', df: 4, fromNode: 0, bytes: 100 });
  at(210, 1, 0, { kind: 'dfSendStart', df: 4, toNode: 2, bytes: 100 });
  at(215, 1, 0, { kind: 'dfSendEnd', df: 4, toNode: 2 });
  at(300, 2, 0, { kind: 'dfName', df: 9, name: 'x' });
  at(300, 2, 0, { kind: 'dfReceive', df: 9, fromNode: 1, bytes: 100 });
  at(301, 2, 0, { kind: 'cfInput', cf: 3, df: 9 });
  at(310, 2, 1, { kind: 'cfStart', cpu: 1000, cf: 3, lane: 1 });
  at(410, 2, 1, { kind: 'cfFinish', cpu: 1080, cf: 3, lane: 1 });
  at(415, 2, 0, { kind: 'dfName', df: 10, name: 'y' });
  at(415, 2, 0, { kind: 'dfComputed', df: 10, producerCf: 3, bytes: 8 });
  // c: spawned and run on node 2; reads y; a finish without a start (d) is dropped
  at(420, 2, 0, { kind: 'cfCreated', cf: 4, parentCf: -1, site: 0, gid: 'c', labelIdx: [] });
  at(421, 2, 0, { kind: 'cfInput', cf: 4, df: 10 });
  at(430, 2, 1, { kind: 'cfStart', cpu: 2000, cf: 4, lane: 1 });
  at(460, 2, 1, { kind: 'cfFinish', cpu: 2030, cf: 4, lane: 1 });
  at(470, 1, 1, { kind: 'cfFinish', cpu: 5, cf: 99, lane: 1 });
  at(480, 0, 0, { kind: 'sysBusy', end: 500 });
  for (let n = 0; n < 3; n++) at(600, n, 0, { kind: 'programFinish', status: 1 });
  inTemp((dir) => {
    writeSimTrace(dir, M, ev);
    const [a, b] = both(dir);
    assertSameProfile(a, b);
    assert.deepEqual(nameList(a.gid), ['a', 'b', 'c']);
    assert.deepEqual([...a.node], [0, 2, 2]);
    assert.deepEqual([...a.spawn!], [0, 0, 2], 'b was spawned on node 0 and ran on node 2');
    assert.deepEqual([...a.cpu], [90, 80, 30]);
    assert.deepEqual([...a.depStart], [0, 0, 1, 2]);
    assert.deepEqual([...a.depFrom], [0, 1], 'b reads a\'s x (relayed), c reads b\'s y');
    assert.deepEqual(nameList(a.dfKey), ['x', 'y']);
    assert.deepEqual([...a.dfOwner], [1, 2], 'x went through node 1 unread (the owner rule takes that node as its keeper); y stayed where written');
    assert.deepEqual([...a.xferNs], [70, 170], 'a hop counts from the first send of its chain');
    assert.deepEqual([...a.sendNs!], [10, 5]);
    assert.equal(a.sysWallNs![0], 20);
    assert.ok(a.warnings.some((w) => /cfFinish without cfStart/.test(w)), a.warnings.join('; '));
  });
});
