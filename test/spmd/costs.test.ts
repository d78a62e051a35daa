// What barriers, gets and memgets cost across two real node processes (`luna spmd --nodes 2`
// over the TCP/Unix-socket transport): requests the ranks posted to their node's system thread,
// the layer's messages each node sent and received by tag, the transport's socket writes, the
// ranks' sleeps — each node's counts as it writes them under $LUNA_SPMD_COUNTS. No timings.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { explain, inTempDir, luna } from '../cli/helpers.js';
import { READ_CHUNK, type SpmdCounts } from '../../src/spmd/host.js';

const PROGRAMS = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '../../../test/spmd/programs');

type NodeCounts = SpmdCounts & { transport?: { framesSent: number; socketWrites: number } };

async function counts(name: string, threads: number, args: string[], env: Record<string, string> = {}): Promise<NodeCounts[]> {
  return inTempDir('luna-spmd-costs-', async (dir) => {
    const r = await luna(['spmd', '--nodes', '2', '--threads', String(threads), join(PROGRAMS, `${name}.ts`), ...args], dir, 90_000, { ...process.env, LUNA_SPMD_COUNTS: dir, ...env });
    assert.equal(r.status, 0, explain(r));
    return [0, 1].map((n) => JSON.parse(readFileSync(join(dir, `node-${n}.json`), 'utf8')) as NodeCounts);
  });
}

test('across two processes of one machine a barrier phase costs no message, request or socket write: the ranks meet in the shared segment', async () => {
  const n = 100;
  const phases = 1 + 2 * n; // the start, n barriers, n notify/wait pairs
  for (const threads of [2, 4]) {
    const nodes = await counts('barriers', threads, [String(n)]);
    for (const [i, c] of nodes.entries()) {
      for (const k of Object.keys(c.requests)) assert.ok(k === 'done' || k === 'park', `node ${i}, ${threads} ranks: a ${k} request`);
      assert.deepEqual(c.sent, {}, `node ${i}: the layer sent nothing by tag`);
      assert.equal(c.received.ARRIVED ?? 0, 0);
      assert.equal(c.direct, 0);
      // the run's few writes (mesh, handshake, control, end), however many phases
      const w = c.transport!.socketWrites;
      assert.ok(w <= 40, `node ${i}: ${w} socket writes for ${phases} barrier phases`);
      // a wait sleeps at most twice (its silent sleep and a parked one)
      for (const s of c.sleeps) assert.ok(s <= 2 * phases + 10, `node ${i}: a rank slept ${s} times in ${phases} phases`);
    }
  }
});

test('through the sockets (LUNA_SPMD_SHM=0) a barrier phase costs each node one message each way, written to the socket by the last arriving rank itself', async () => {
  const n = 100;
  const phases = 1 + 2 * n; // the start, n barriers, n notify/wait pairs
  for (const threads of [2, 4]) {
    const nodes = await counts('barriers', threads, [String(n)], { LUNA_SPMD_SHM: '0' });
    for (const [i, c] of nodes.entries()) {
      // whatever the ranks per node: the node's last arriver tells the other node once, writing
      // the frame itself — through the system thread (a request) only when that had messages of
      // this node still to send, or was writing the socket at that moment
      const direct = c.direct, asked = c.requests.arrive ?? 0;
      assert.equal(direct + asked, phases, `node ${i}, ${threads} ranks: ${direct} arrivals written by ranks, ${asked} asked of the system thread`);
      assert.equal(c.sent.ARRIVED ?? 0, asked, `node ${i}: ARRIVED sent by the system thread`);
      assert.ok(direct >= phases / 2, `node ${i}: only ${direct} of ${phases} arrivals written by the ranks`);
      assert.equal(c.received.ARRIVED, phases, `node ${i}: ARRIVED received`);
      for (const k of Object.keys(c.sent)) assert.equal(k, 'ARRIVED', `node ${i}: only arrivals travel`);
      // the system thread's writes: those arrivals and the run's few others (mesh, control, end)
      const w = c.transport!.socketWrites;
      assert.ok(w >= asked && w <= asked + 30, `node ${i}: ${w} socket writes of the transport, ${asked} arrivals through it`);
      // a wait sleeps at most twice (its silent sleep and a parked one)
      for (const s of c.sleeps) assert.ok(s <= 2 * phases + 10, `node ${i}: a rank slept ${s} times in ${phases} phases`);
    }
  }
});

test('across two processes a get is one GET the rank writes itself and one GOT; a memget one GET and a GOT per chunk; the owner asks nothing', async () => {
  const k = 40, n = 3 * (READ_CHUNK / 8) + 5; // the memget spans 4 chunks
  const [c0, c1] = await counts('remote', 2, [String(k), String(n)]);
  assert.equal(c1!.received.GET, k + 1);
  // each read's GET written by the rank itself or, when that could not, sent by its system thread on request
  const asked = c0!.requests.get ?? 0;
  assert.equal(c0!.sent.GET ?? 0, asked);
  // what the ranks of node 0 wrote themselves: the reads not asked and the barrier arrivals not asked
  assert.equal(c0!.direct, (k + 1 - asked) + ((c1!.received.ARRIVED ?? 0) - (c0!.sent.ARRIVED ?? 0)));
  assert.ok(k + 1 - asked >= (k + 1) / 2, `only ${k + 1 - asked} of ${k + 1} reads written by the rank`);
  assert.equal(c1!.sent.GOT, k + 4);
  assert.equal(c0!.received.GOT, k + 4);
  // puts: one message each way, acknowledged by an answer to the putter
  assert.equal(c0!.sent.PUT, k);
  assert.equal(c1!.sent.PUT_ACK, k);
  assert.equal(c0!.answers, 2 + k);
  // the owner's system thread answered from memory: rank 1 posted no request for them
  assert.equal(c1!.requests.get ?? 0, 0);
  assert.equal(c1!.requests.put ?? 0, 0);
  // the owner sent its answers to each read in one write: the memget's four chunks together
  assert.ok(c1!.transport!.socketWrites <= c1!.transport!.framesSent);
});
