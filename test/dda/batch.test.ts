// The protocol's messages to another node leave one frame per node pair and turn (docs/dda.md,
// "The protocol"): many arrays counted together — a particle code's subdomains, each counted
// once a step — share their LOCK, REPORT and UNLOCK frames instead of a round trip each. Counted
// on the wire of 2 in-process nodes: the frames of the array's channel that cross between them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dynamicArray } from '../../src/ucode/dda.js';
import { CHANNEL } from '../../src/runtime/cluster/channels.js';
import { TAG_BITS } from '../../src/runtime/transport/router.js';
import { Nodes } from './nodes.js';

const K = 16;

/** Frames of the array's channel each node sends to another node, from now on. */
function wire(ns: Nodes): number[] {
  const frames = ns.mesh.endpoints.map(() => 0);
  ns.mesh.endpoints.forEach((tp, r) => {
    const send = tp.send.bind(tp);
    tp.send = (to, tag, body, payload) => {
      if (to !== r && tag >>> TAG_BITS === CHANNEL.dda) frames[r]!++;
      return send(to, tag, body, payload);
    };
  });
  return frames;
}

/** Node 1 sends 2 elements (id, 3 id + 1) by destination to each A<i>, whose block is on node 0. */
async function sendToNode0(ns: Nodes): Promise<void> {
  const targets = Array.from({ length: K }, (_, i) => dynamicArray(`A${i}`, { elsize: 16, home: 0 }));
  const h = await ns.acquire(1, 'S');
  h.block.resize(2 * K * 16);
  const f = new Float64Array(h.block.addElement(2 * K)!.buffer, 0, 4 * K);
  for (let i = 0; i < 2 * K; i++) { f[2 * i] = i; f[2 * i + 1] = 3 * i + 1; }
  const d = h.block.destinations(targets);
  for (let i = 0; i < 2 * K; i++) d[i] = i >> 1;
  ns.release(1, 'S', h);
}

test(`${K} arrays counted together from each of 2 nodes: 3 frames each way, not a LOCK, REPORT and UNLOCK per array; every element delivered`, async () => {
  const ns = new Nodes(2);
  try {
    ns.declare({ name: 'S', home: 1 });
    for (let i = 0; i < K; i++) { ns.declare({ name: `A${i}`, home: 0 }); ns.declare({ name: `B${i}`, home: 1 }); }
    await sendToNode0(ns);
    // (node 1's release sent its elements ahead to node 0, K STANDs in one frame: before these counts)
    const frames = wire(ns);
    const f0 = ns.dda.map((d) => d.frames), b0 = ns.dda.map((d) => d.batched);
    // asked in one turn, as a node's system thread asks the counts the data arriving together made ready
    const counts = await Promise.all([
      ...Array.from({ length: K }, (_, i) => ns.count(0, `A${i}`)),
      ...Array.from({ length: K }, (_, i) => ns.count(1, `B${i}`)),
    ]);
    assert.deepEqual(counts, [...new Array(K).fill(2), ...new Array(K).fill(0)]);
    for (let i = 0; i < K; i++) {
      const f = ns.dda[0]!.block(`A${i}`).f64();
      assert.deepEqual([...f], [2 * i, 6 * i + 1, 2 * i + 1, 6 * i + 4], `A${i} got its two elements, intact`);
    }
    // wait for the UNLOCKs (the counts end at their GDs first)
    for (let turn = 0; turn < 50; turn++) await new Promise((r) => setImmediate(r));
    // each array's protocol is the same, message for message: a LOCK and a REPORT per node, an UNLOCK to each
    const sum = (k: 'lock' | 'report' | 'unlock' | 'carried'): number => ns.dda.reduce((s, d) => s + d.sent[k], 0);
    assert.deepEqual([sum('lock'), sum('report'), sum('unlock'), sum('carried')], [4 * K, 4 * K, 4 * K, K]);
    // across nodes that was 3 K messages each way (node 0: LOCKs of A, REPORTs of B, UNLOCKs of A);
    // they travel as one frame of each kind
    assert.deepEqual(frames, [3, 3], `frames sent by node 0, node 1 (one per array would be ${3 * K} each)`);
    assert.deepEqual(ns.dda.map((d, i) => d.frames - f0[i]!), [3, 3], 'the layer counts what the wire saw');
    assert.deepEqual(ns.dda.map((d, i) => d.batched - b0[i]!), [3 * K, 3 * K]);
  } finally { await ns.close(); }
});

test('in a batch, a count waiting for a block held on the other node is named in its hang report with the array, block and holder; the others end', async () => {
  const ns = new Nodes(2);
  for (let i = 0; i < K; i++) ns.declare({ name: `A${i}`, home: 0 });
  // a CF on node 1 holds its block of A3 and never gives it back
  await ns.acquire(1, 'A3', 77);
  const frames = wire(ns);
  const asked = Array.from({ length: K }, (_, i) => ns.count(0, `A${i}`, 100 + i));
  const ended = await Promise.all(asked.filter((_, i) => i !== 3));
  assert.deepEqual(ended, new Array(K - 1).fill(0));
  for (let turn = 0; turn < 50; turn++) await new Promise((r) => setImmediate(r));
  assert.deepEqual(frames, [2, 1], 'LOCKs and UNLOCKs from node 0, REPORTs from node 1, each one frame');
  assert.deepEqual(ns.dda[1]!.waits().map((w) => w.text), ['a global operation of dynamic array A3 waits for its block on node 1, held by CF 77']);
  assert.deepEqual(ns.dda[0]!.waits().map((w) => w.text), ['CF on node 0 waits for the global count of dynamic array A3']);
  void asked[3]!.catch(() => {});
  await ns.close();
});

test('a run whose last protocol messages wait in an outbox when every other participant goes idle still ends', { timeout: 60_000 }, async () => {
  const ns = new Nodes(2);
  ns.declare({ name: 'A' });
  // asked, then the driver stops at once: node 0's LOCK to node 1 is still queued when its
  // control finds the driver idle (and later its UNLOCK, when the count ends): the node is not
  // idle until they have left, and the run ends once they have (else the test's timeout)
  const counted = ns.count(0, 'A');
  await ns.close();
  assert.equal(await counted, 0);
});
