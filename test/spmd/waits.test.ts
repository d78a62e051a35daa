// What the SPMD layer's waits and remote accesses cost, counted on real worker threads and nodes
// of an in-memory mesh in this process: requests to the node's system thread, messages between
// nodes by tag, answers back to the ranks, and the times a rank went to sleep. No timings.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleSpmdProgram } from '../../src/spmd/bundle.js';
import { runSpmdNode, type SpmdRunResult } from '../../src/spmd/run.js';
import { READ_CHUNK, SPMD_TAGS } from '../../src/spmd/host.js';
import { countingMesh } from './mesh.js';

const PROGRAMS = fileURLToPath(new URL('../../../test/spmd/programs/', import.meta.url));
const cache = mkdtempSync(join(tmpdir(), 'luna-spmd-waits-'));
after(() => rmSync(cache, { recursive: true, force: true }));

/** Run a program on `threads` ranks over `nodes` in-process nodes: every node's result and the layer's messages each node sent, by tag. */
async function run(name: string, threads: number, nodes: number, args: string[], shm?: boolean): Promise<{ results: SpmdRunResult[]; sent: Map<number, number>[] }> {
  const program = await bundleSpmdProgram(join(PROGRAMS, `${name}.ts`), cache);
  const { mesh, sent } = countingMesh(nodes);
  const results = await Promise.all(mesh.endpoints.map((tp) => runSpmdNode({ program, threads, args, transport: tp, shm })));
  for (const r of results) assert.equal(r.message, undefined);
  return { results, sent };
}

test('barriers within a node ask nothing of the system thread; across nodes through the sockets one request per barrier phase and node', async () => {
  const n = 40;
  const one = await run('barriers', 4, 1, [String(n)]);
  const c1 = one.results[0]!.counts!;
  // only how each rank ended, and a park for a wait that outlasted the silent first sleep
  for (const k of Object.keys(c1.requests)) assert.ok(k === 'done' || k === 'park', `a ${k} request on one node`);
  assert.equal(c1.requests.done, 4);
  assert.ok((c1.requests.park ?? 0) <= c1.parks.reduce((s, x) => s + x, 0));
  const two = await run('barriers', 4, 2, [String(n)], false);
  for (const r of two.results) {
    // the start barrier, n barriers and n notify/wait phases: the node's last arriver asks once
    assert.equal(r.counts!.requests.arrive, 1 + 2 * n);
    assert.equal(r.counts!.requests.flags ?? 0, 0);
  }
});

test('nodes of one machine meet at barriers in their shared segment: no request, no message, whatever the ranks per node', async () => {
  const n = 40;
  for (const [threads, nodes] of [[2, 2], [4, 2], [6, 3]] as const) {
    const { results, sent } = await run('barriers', threads, nodes, [String(n)]);
    for (const [i, r] of results.entries()) {
      const c = r.counts!;
      for (const k of Object.keys(c.requests)) assert.ok(k === 'done' || k === 'park', `node ${i}: a ${k} request (${threads} ranks on ${nodes} nodes)`);
      assert.equal(c.received.ARRIVED ?? 0, 0);
      assert.equal(c.direct, 0);
      // the start's handshake is all the layer sends: node 0 one SEGMENT and one HOSTMODE to each other node, each other node one JOINED
      const total = [...sent[i]!.values()].reduce((a, b) => a + b, 0);
      assert.equal(total, i === 0 ? 2 * (nodes - 1) : 1, `node ${i}: ${total} messages of the layer`);
      assert.equal(sent[i]!.get(SPMD_TAGS.ARRIVED) ?? 0, 0);
    }
  }
});

test('a node that cannot join the shared segment (another machine, LUNA_SPMD_SHM=0 there) keeps every node\'s barriers on the sockets', async () => {
  const n = 10;
  const program = await bundleSpmdProgram(join(PROGRAMS, 'barriers.ts'), cache);
  for (const off of [0, 1]) {
    const { mesh, sent } = countingMesh(2);
    const results = await Promise.all(mesh.endpoints.map((tp, i) => runSpmdNode({ program, threads: 2, args: [String(n)], transport: tp, shm: i !== off })));
    for (const r of results) assert.equal(r.message, undefined);
    for (const s of sent) assert.equal(s.get(SPMD_TAGS.ARRIVED), 1 + 2 * n, `node ${off} without the segment`);
  }
});

test('collectives across nodes of one machine synchronise in the shared segment: no flags request, no FLAGS message', async () => {
  for (const shm of [true, false]) {
    const { results, sent } = await run('collectives', 4, 2, [], shm);
    for (const [i, r] of results.entries()) {
      const flags = r.counts!.requests.flags ?? 0;
      // through the sockets every change of a rank's counters is a request and a FLAGS message to the other node
      if (shm) { assert.equal(flags, 0, `node ${i}`); assert.equal(sent[i]!.get(SPMD_TAGS.FLAGS) ?? 0, 0, `node ${i}`); }
      else { assert.ok(flags > 0, `node ${i}: no flags request through the sockets`); assert.equal(sent[i]!.get(SPMD_TAGS.FLAGS), flags, `node ${i}`); }
    }
  }
});

test('a rank waiting at a barrier is not woken by locks, puts and gets of other ranks on its memory and node', async () => {
  const k = 300;
  const { results } = await run('bystander', 4, 2, [String(k)]);
  const c = results[0]!.counts!;
  // rank 1 (node 0, second rank) waits at most: the start, allAlloc, three barriers — each at
  // most a silent sleep and a parked one, allAlloc's entry and exit waits a few more; each of
  // the others' 3·300 lock hand-overs and puts woke it before barriers slept on their own word
  assert.ok(c.sleeps[1]! <= 24, `rank 1 slept ${c.sleeps[1]} times`);
});

test('a remote get is one request, one GET and one GOT, answered without an answer message; a memget streams in chunks', async () => {
  const k = 50, n = 3 * (READ_CHUNK / 8) + 5; // elements: the memget's bytes span 4 chunks
  const { results, sent } = await run('remote', 2, 2, [String(k), String(n)]);
  const [c0, c1] = [results[0]!.counts!, results[1]!.counts!];
  assert.equal(c0.requests.get, k + 1);
  assert.equal(sent[0]!.get(SPMD_TAGS.GET), k + 1);
  assert.equal(sent[1]!.get(SPMD_TAGS.GOT), k + 4);
  // the reads land in the rank's inbox (told twice: first small, then grown for the memget)
  assert.equal(c0.requests.inbox, 2);
  // answers: the two allocations and the k put acknowledgements, none for the reads
  assert.equal(c0.answers, 2 + k);
  assert.equal(sent[0]!.get(SPMD_TAGS.PUT), k);
  assert.equal(sent[1]!.get(SPMD_TAGS.PUT_ACK), k);
  // the owner's system thread answered the reads and took the puts: rank 1 asked nothing for them
  assert.equal(c1.requests.get ?? 0, 0);
  assert.equal(c1.answers, 2);
});
