// A DF read by several CFs of another node crosses to that node once: the node keeps a copy for
// its later readers, every read still counts at the owner (req_count stays exact, one read too
// many is named on the reading node), and the copy goes when the owner frees the value.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runInProcess } from './harness.js';
import type { MemoryMesh } from '../../src/runtime/transport/memory.js';

const READERS = (count: string) => `import c_make(int \`n, name \`x) as make;
import c_use(int \`i, value \`x) as use;

sub main(int k, int readers, int nodes)
{
    df x;
    cf p: make(4096, x) @ { ${count} locator_cyclic: 0; };
    for i = 0..readers-1
        cf r[i]: use(i, x) @ { locator_cyclic: 1 + i % (nodes - 1); };
}
`;

type DF = { setData(b: ArrayBufferView): void; getFloat64Array(): Float64Array };

/** Large messages (a value) sent by each node to each other, counted as the run goes. */
function countValues(m: MemoryMesh, big: Map<string, number>): void {
  for (const ep of m.endpoints) {
    const send = ep.send.bind(ep);
    ep.send = (to, tag, body, payload) => {
      if ((payload?.byteLength ?? 0) + body.byteLength >= 16_384) big.set(`${ep.rank}>${to}`, (big.get(`${ep.rank}>${to}`) ?? 0) + 1);
      return send(to, tag, body, payload);
    };
  }
}

async function run(count: string, k: number, readers: number, nodes: number) {
  const seen: string[] = [];
  const big = new Map<string, number>();
  const ucodes = {
    c_make: (n: number, x: DF) => x.setData(new Float64Array(n).fill(7)),
    c_use: (i: number, x: DF) => { seen.push(`${i}:${x.getFloat64Array()[4095]}`); },
  };
  const r = await runInProcess(READERS(count), ucodes, { nodes, args: [String(k), String(readers), String(nodes)], mesh: (m) => countValues(m, big) });
  return { r, seen: seen.sort(), big };
}

test('six readers on another node: the value crosses once, every reader gets it, the copy is dropped when the count is used up', async () => {
  const { r, seen, big } = await run('req_count x = k;', 6, 6, 2);
  assert.equal(r.ok, true, r.message);
  assert.deepEqual(seen, ['0:7', '1:7', '2:7', '3:7', '4:7', '5:7']);
  assert.deepEqual([...big], [['0>1', 1]], 'one 32 KiB value from node 0 to node 1');
  assert.equal(r.nodes[1]!.rt.st.store.copiesKept, 0, 'the owner freed it: node 1 dropped its copy');
  assert.equal(r.nodes[1]!.rt.st.store.liveBytes, 0);
  assert.equal(r.nodes[0]!.rt.st.store.size, 0, 'freed at its owner after its 6 reads');
});

test('readers on two other nodes: one value to each; a DF without req_count is copied and never counted', async () => {
  const counted = await run('req_count x = k;', 8, 8, 3);
  assert.equal(counted.r.ok, true, counted.r.message);
  assert.equal(counted.seen.length, 8);
  assert.deepEqual([...counted.big].sort(), [['0>1', 1], ['0>2', 1]]);
  const unlimited = await run('', 0, 8, 3);
  assert.equal(unlimited.r.ok, true, unlimited.r.message);
  assert.equal(unlimited.seen.length, 8);
  assert.deepEqual([...unlimited.big].sort(), [['0>1', 1], ['0>2', 1]]);
});

test('one reader too many on the reading node fails the run naming a reader there, as without copies', async () => {
  const { r, seen } = await run('req_count x = k;', 2, 3, 2);
  assert.equal(r.ok, false);
  assert.match(r.message ?? '', /too many requests for DF x \(held by node 0\)/);
  assert.match(r.message ?? '', /CF r\b[^\n]* on node 1/);
  assert.ok(seen.length <= 2, `at most the 2 reads the count allows ran: ${seen.join(' ')}`);
});
