// The in-memory mesh (transport/memory.ts), which stands in for the TCP mesh when node runtimes
// share a process: delivery on a later turn in send order, copies of what was sent, lost nodes
// and graceful closes as the TCP transport reports them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryMesh } from '../../src/runtime/transport/memory.js';

const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

test('a message arrives on a later turn, never inside send, in send order per sender, from every rank to every rank', async () => {
  const mesh = new MemoryMesh(3);
  const got: string[][] = [[], [], []];
  for (const e of mesh.endpoints) e.onMessage((from, tag) => got[e.rank]!.push(`${from}>${tag}`));
  for (const e of mesh.endpoints) for (let to = 0; to < 3; to++) for (let k = 0; k < 3; k++) e.send(to, 10 * e.rank + k, new Uint8Array(0));
  assert.deepEqual(got, [[], [], []]);
  await turn();
  for (let r = 0; r < 3; r++) assert.deepEqual(got[r], ['0>0', '0>1', '0>2', '1>10', '1>11', '1>12', '2>20', '2>21', '2>22']);
});

test('the body is copied at send (encoders reuse their buffer); a payload is copied for another node, kept for oneself', async () => {
  const [a, b] = new MemoryMesh(2).endpoints;
  const seen: { body: Uint8Array; payload?: Uint8Array }[][] = [[], []];
  a!.onMessage((_f, _t, body, payload) => seen[0]!.push({ body, payload }));
  b!.onMessage((_f, _t, body, payload) => seen[1]!.push({ body, payload }));
  const body = Uint8Array.of(1, 2, 3), payload = Uint8Array.of(7, 8);
  a!.send(1, 1, body, payload);
  a!.send(0, 1, body, payload);
  body[0] = 99;
  await turn();
  assert.deepEqual([...seen[1]![0]!.body], [1, 2, 3]);
  assert.deepEqual([...seen[1]![0]!.payload!], [7, 8]);
  assert.notEqual(seen[1]![0]!.payload, payload);
  assert.equal(seen[0]![0]!.payload, payload);
  assert.deepEqual([...seen[0]![0]!.body], [1, 2, 3]);
});

test('a lost node: every other reports it once (on a later turn), it reports every other, and nothing passes between them', async () => {
  const mesh = new MemoryMesh(3);
  const lost: string[] = [];
  const got: string[] = [];
  for (const e of mesh.endpoints) {
    e.onPeerLost((r, why) => lost.push(`${e.rank} lost ${r}: ${why}`));
    e.onMessage((from, tag) => got.push(`${from}>${e.rank}:${tag}`));
  }
  mesh.endpoints[1]!.send(0, 1, new Uint8Array(0)); // queued before the loss: dropped too
  mesh.lose(1, 'killed');
  mesh.lose(1, 'killed');
  assert.deepEqual(lost, []);
  mesh.endpoints[0]!.send(1, 2, new Uint8Array(0));
  mesh.endpoints[1]!.send(2, 3, new Uint8Array(0));
  mesh.endpoints[0]!.send(2, 4, new Uint8Array(0));
  await turn();
  assert.deepEqual(lost.sort(), ['0 lost 1: killed', '1 lost 0: killed', '1 lost 2: killed', '2 lost 1: killed']);
  assert.deepEqual(got, ['0>2:4']);
});

test('a closed endpoint receives nothing more and is not reported lost (a graceful close)', async () => {
  const [a, b] = new MemoryMesh(2).endpoints;
  const lost: number[] = [];
  const got: number[] = [];
  a!.onPeerLost((r) => lost.push(r));
  b!.onMessage((_f, tag) => got.push(tag));
  a!.send(1, 1, new Uint8Array(0));
  await b!.close();
  a!.send(1, 2, new Uint8Array(0));
  await turn();
  assert.deepEqual(got, []);
  assert.deepEqual(lost, []);
});

test('a rank outside the mesh is refused, naming it', () => {
  const mesh = new MemoryMesh(2);
  assert.throws(() => mesh.endpoints[0]!.send(2, 1, new Uint8Array(0)), /send: no rank 2 \(size 2\)/);
  assert.throws(() => mesh.lose(5), /lose: no rank 5 \(size 2\)/);
  assert.throws(() => new MemoryMesh(0), /bad mesh size 0/);
});

test('a held link: what one node sends another stays in flight until released, then arrives in order; other links flow', async () => {
  const mesh = new MemoryMesh(3);
  const got: string[] = [];
  mesh.endpoints[1]!.onMessage((from, tag) => got.push(`${from}:${tag}`));
  mesh.endpoints[0]!.send(1, 1, new Uint8Array(0));
  mesh.hold(0, 1); // a message already queued is held too
  mesh.endpoints[0]!.send(1, 2, new Uint8Array(0));
  mesh.endpoints[2]!.send(1, 7, new Uint8Array(0));
  await turn();
  await turn();
  assert.deepEqual(got, ['2:7']);
  mesh.release(0, 1);
  mesh.endpoints[0]!.send(1, 3, new Uint8Array(0));
  await turn();
  assert.deepEqual(got, ['2:7', '0:1', '0:2', '0:3']);
});
