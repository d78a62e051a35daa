// The SPMD/PGAS layer with real worker threads as ranks, on one node and on several nodes of an
// in-memory mesh in this process: results every rank checks itself, misuse errors naming the
// rank, call site and operation, and a hang report for a barrier some rank never reaches.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleSpmdProgram } from '../../src/spmd/bundle.js';
import { runSpmdNode, type SpmdRunResult } from '../../src/spmd/run.js';
import { MemoryMesh } from '../../src/runtime/transport/memory.js';
import { Layout } from '../../src/spmd/layout.js';
import { SPMD_TAGS } from '../../src/spmd/host.js';
import { countingMesh } from './mesh.js';

const PROGRAMS = fileURLToPath(new URL('../../../test/spmd/programs/', import.meta.url));
const cache = mkdtempSync(join(tmpdir(), 'luna-spmd-test-'));
after(() => rmSync(cache, { recursive: true, force: true }));

/** Run a program of programs/ on `threads` ranks over `nodes` in-process nodes; node 0's result. */
async function run(name: string, threads: number, nodes = 1, args: string[] = [], shm?: boolean): Promise<SpmdRunResult> {
  const program = await bundleSpmdProgram(join(PROGRAMS, `${name}.ts`), cache);
  if (nodes === 1) return runSpmdNode({ program, threads, args });
  const mesh = new MemoryMesh(nodes);
  const all = await Promise.all(mesh.endpoints.map((tp) => runSpmdNode({ program, threads, args, transport: tp, shm })));
  return all[0]!;
}

test('block-cyclic layout: owner, local index and back, local lengths add up', () => {
  for (const [n, b, t] of [[10, 1, 3], [23, 3, 4], [7, 10, 2], [64, 4, 4], [5, 2, 8]] as const) {
    const l = new Layout(n, b, t);
    const counts = new Array<number>(t).fill(0);
    for (let i = 0; i < n; i++) {
      const o = l.owner(i), j = l.localIndex(i);
      assert.equal(o, Math.floor(i / b) % t);
      assert.equal(l.globalIndex(o, j), i);
      assert.ok(j < l.perRank);
      assert.equal(j, counts[o]);
      counts[o]!++;
    }
    for (let r = 0; r < t; r++) assert.equal(l.localLength(r), counts[r], `n=${n} b=${b} t=${t} rank ${r}`);
    const pieces: number[][] = [];
    l.runs(1, n - 1, (o, j, at, c) => pieces.push([o, j, at, c]));
    assert.equal(pieces.reduce((s, p) => s + p[3]!, 0), n - 1);
    for (const [o, j, at] of pieces) assert.equal(l.globalIndex(o!, j!), 1 + at!);
  }
});

test('one node, 4 ranks: shared arrays, put/get, memput/memget/memcpy, barriers, split phase, locks', async () => {
  const r = await run('basics', 4);
  assert.equal(r.message, undefined);
  assert.equal(r.ok, true);
});

test('one node, 3 ranks: every collective in every synchronisation mode', async () => {
  const r = await run('collectives', 3);
  assert.equal(r.message, undefined);
  assert.equal(r.ok, true);
});

test('two in-process nodes, 2 ranks each: the same programs across nodes, barriers in the shared segment and through the sockets', async () => {
  for (const shm of [true, false]) {
    const b = await run('basics', 4, 2, [], shm);
    assert.equal(b.message, undefined);
    assert.equal(b.ok, true);
    const c = await run('collectives', 4, 2, [], shm);
    assert.equal(c.message, undefined);
    assert.equal(c.ok, true);
    // a lock released on another node before a barrier is free after it
    const u = await run('unlock', 4, 2, ['30'], shm);
    assert.equal(u.message, undefined);
    assert.equal(u.ok, true);
  }
});

test('through the sockets barriers combine per node: one message per barrier phase from each node to each other, whatever the ranks per node', async () => {
  const program = await bundleSpmdProgram(join(PROGRAMS, 'barriers.ts'), cache);
  const n = 25;
  for (const [threads, nodes] of [[4, 2], [6, 3], [2, 2]] as const) {
    const { mesh, sent } = countingMesh(nodes);
    const all = await Promise.all(mesh.endpoints.map((tp) => runSpmdNode({ program, threads, args: [String(n)], transport: tp, shm: false })));
    for (const r of all) assert.equal(r.message, undefined);
    // the start barrier, n barriers and n notify/wait phases
    const phases = 1 + 2 * n;
    for (const counts of sent) {
      assert.equal(counts.get(SPMD_TAGS.ARRIVED), phases * (nodes - 1), `${threads} ranks on ${nodes} nodes`);
      assert.equal(counts.get(SPMD_TAGS.FLAGS) ?? 0, 0);
    }
  }
});

test('a barrier some rank never reaches is a hang report naming who waits where for whom', async () => {
  for (const [nodes, shm] of [[1, true], [2, true], [2, false]] as const) {
    const r = await run('hang', 4, nodes, [], shm);
    assert.equal(r.ok, false);
    assert.equal(r.kind, 'hang');
    assert.match(r.message!, /rank 0 .*waits at barrier \(phase 1\) for rank 1 \(rank 1 has returned from the program\)/);
    assert.match(r.message!, /hang\.ts:6:3/);
    // the other node's ranks: through the segment they name the late rank, through the sockets its node
    if (nodes === 2) assert.match(r.message!, shm ? /rank 2 on node 1 waits at barrier \(phase 1\) for rank 1 / : /rank 2 on node 1 waits at barrier \(phase 1\) for a rank of node 0 /);
  }
});

const misuse: [string, RegExp][] = [
  ['index', /rank 1: get at .*misuse\.ts:8:\d+: index \d+ outside shared array #1 of 8 elements/],
  ['rank', /rank 1: getFrom at .*misuse\.ts:9:\d+: rank 2 out of range \(THREADS = 2\)/],
  ['unlock', /rank 1: unlock at .*misuse\.ts:10:\d+: lock 0 is not held by this rank/],
  ['collective', /rank \d: (gather|broadcast) at .*misuse\.ts:1[23]:\d+: mismatched collective #2: this rank called (gather|broadcast), rank \d called (broadcast|gather)/],
  ['alloc', /mismatched allAlloc of shared array #2: this rank asked for (8|16) f64 element\(s\) in blocks of 1, rank \d for (16|8)/],
];
for (const [what, re] of misuse) {
  test(`misuse (${what}) fails the run with the rank, call site and operation`, async () => {
    const r = await run('misuse', 2, 1, [what]);
    assert.equal(r.ok, false);
    assert.equal(r.kind, 'fault');
    assert.match(r.message!, re);
  });
}

test('across nodes, through the shared segment and through the sockets: a mismatched collective is an error, a collective some rank never enters a hang report', async () => {
  for (const shm of [true, false]) {
    // one rank per node: rank 1 (node 1) calls gather, rank 0 broadcast
    const m = await run('misuse', 2, 2, ['collective'], shm);
    assert.equal(m.kind, 'fault', `shm ${shm}: ${m.message}`);
    assert.match(m.message!, misuse.find(([w]) => w === 'collective')![1]);
    const h = await run('hang-collective', 4, 2, [], shm);
    assert.equal(h.kind, 'hang', `shm ${shm}: ${h.message}`);
    // the root (rank 0) and every other rank wait for rank 1 to enter the broadcast
    for (const t of [0, 2, 3]) assert.match(h.message!, new RegExp(`rank ${t} .*waits in broadcast \\(collective #\\d+\\) for rank 1 to enter it .*hang-collective\\.ts:7:3`), `shm ${shm}`);
  }
});

test('a mismatched allAlloc across nodes fails the run naming both ranks, their nodes and call sites', async () => {
  // one rank per node: the mismatch is seen only by comparing the nodes' allocations
  const r = await run('misuse', 2, 2, ['alloc']);
  assert.equal(r.ok, false);
  assert.equal(r.kind, 'fault');
  assert.match(r.message!, /rank [01]: allAlloc at .*misuse\.ts:15:\d+: mismatched allAlloc of shared array #2: this rank asked for (8|16) f64 element\(s\) in blocks of 1, rank [01] on node [01] for (16|8) .*\(at .*misuse\.ts:15:\d+\)/);
});
