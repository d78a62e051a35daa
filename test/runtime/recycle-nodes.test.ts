// Recycled raw buffers on several in-process nodes (test/runtime/files.ts: node runtimes on
// this one thread, each with its own lanes, batches and DF store, sharing the thread's pool), with
// recycling on and every buffer poisoned as it enters the pool (LUNA_RECYCLE_POISON): a reader
// still holding a buffer the runtime let go reads 0xFF words and fails the run naming itself.
// The program (programs/recycle_nodes) makes chains of raw DFs of a few sizes whose links are
// forwarded within a lane from a batch sent earlier — a reader no holder count covers but its
// batch's — read late on other nodes and aliased by copy(). With lagged lanes a batch runs well
// after the pumps that sent it, so the nodes' pumps free and settle values in between, as they do
// beside a worker thread.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { program } from './helpers.js';

// read once, when the runtime's modules load: so before they are imported
process.env.LUNA_RECYCLE_MB = '64';
process.env.LUNA_RECYCLE_POISON = '1';
const { runFile } = await import('./files.js');
const { recycling } = await import('../../src/runtime/exec/shm.js');
const { receivedPayload } = await import('../../src/runtime/cluster/data.js');
const { poolRaw, setRecyclePoison, takeRaw, recycledId } = await import('../../src/ucode/recycle.js');

const FILE = program('recycle_nodes');
const CONFIGS = [[1, 1], [1, 2], [2, 1], [2, 2], [3, 2]] as const;

describe('recycled raw buffers on several in-process nodes', () => {
  test('poison: a buffer entering the pool is filled with 0xFF bytes', () => {
    const a = takeRaw(20_000, 0, false);
    a.fill(7);
    assert.ok(poolRaw(a.buffer as SharedArrayBuffer));
    const b = takeRaw(20_000, 0, false);
    assert.equal(recycledId(b), recycledId(a), 'the same buffer, taken again');
    assert.ok(b.every((x) => x === 0xff), 'it reads poison, not its last value');
    assert.ok(new Float64Array(b.buffer, 0, 8).every((x) => Number.isNaN(x)), 'NaN as doubles');
    setRecyclePoison(false);
    try {
      b.fill(7);
      assert.ok(poolRaw(b.buffer as SharedArrayBuffer));
      assert.equal(takeRaw(20_000, 0, false)[0], 7, 'poison off: the last value stays');
    } finally { setRecyclePoison(true); }
  });

  for (const lagged of [true, false]) {
    for (const [nodes, lanes] of CONFIGS) {
      test(`${nodes} node(s) × ${lanes} lane(s)${lagged ? ', lagged lanes' : ''}: no reader sees a reused buffer`, async () => {
        const before = { ...recycling };
        const r = await runFile(FILE, { nodes, lanes, lagged, args: ['6', '60'] });
        const why = `ok ${r.ok} ${r.message ?? ''}\n${r.stdout.join('\n')}`;
        assert.equal(r.ok, true, why);
        assert.deepEqual(r.stdout, ['recycle_nodes ok chains=6 n=60'], why);
        // the run did recycle: freed links went to the pool and served later ones
        assert.ok(recycling.recycled - before.recycled >= 30, `recycled ${recycling.recycled - before.recycled}`);
        assert.ok(recycling.reused - before.reused >= 10, `reused ${recycling.reused - before.reused}`);
        // values read on another node were sent there; the in-process mesh copies them in send,
        // as a same-machine ring does, so their buffers go back to a pool here too
        if (nodes > 1) {
          const sent = recycling.sent - before.sent, back = recycling.sentRecycled - before.sentRecycled;
          assert.ok(sent >= 30 && back >= sent / 2, `sent ${sent}, of them back in a pool ${back}`);
        }
      });
    }
  }

  // a transport that keeps a sent payload as it is, to copy later (a socket's write pending): the
  // send holds the buffer until the transport releases it, once copied, so the bytes it copies
  // late are the value's (poison, were the buffer pooled before), and the buffer goes back to a
  // pool after
  for (const lagged of [true, false]) {
    for (const [nodes, lanes] of [[2, 1], [2, 2], [3, 2]] as const) {
      test(`${nodes} nodes × ${lanes} lane(s)${lagged ? ', lagged lanes' : ''}, payloads copied late as a socket does: sent buffers recycled once copied, no reader sees a reused buffer`, async () => {
        const before = { ...recycling };
        const r = await runFile(FILE, { nodes, lanes, lagged, args: ['6', '60'], mesh: (m) => { m.copyLate = true; } });
        const why = `ok ${r.ok} ${r.message ?? ''}\n${r.stdout.join('\n')}`;
        assert.equal(r.ok, true, why);
        assert.deepEqual(r.stdout, ['recycle_nodes ok chains=6 n=60'], why);
        const sent = recycling.sent - before.sent, pinned = recycling.pinned - before.pinned, back = recycling.sentRecycled - before.sentRecycled;
        assert.ok(sent >= 30 && back >= sent / 2, `sent ${sent}, of them back in a pool ${back}`);
        assert.equal(pinned, 0, 'released, not pinned');
      });
    }
  }

  // a raw value received from another node goes into a recyclable buffer (the transport's
  // allocPayload of a node process, cluster/data.ts): counted from its arrival, by its post, its
  // readers, the copy kept for later readers, and reused once none reads it
  for (const lagged of [true, false]) {
    for (const [nodes, lanes] of [[2, 1], [2, 2], [3, 2]] as const) {
      test(`${nodes} nodes × ${lanes} lane(s)${lagged ? ', lagged lanes' : ''}, values received into recycled buffers: no reader sees a reused buffer`, async () => {
        const before = { ...recycling };
        const r = await runFile(FILE, { nodes, lanes, lagged, args: ['6', '60'], mesh: (m) => { m.allocPayload = receivedPayload; } });
        const why = `ok ${r.ok} ${r.message ?? ''}\n${r.stdout.join('\n')}`;
        assert.equal(r.ok, true, why);
        assert.deepEqual(r.stdout, ['recycle_nodes ok chains=6 n=60'], why);
        const received = recycling.received - before.received, recycled = recycling.receivedRecycled - before.receivedRecycled;
        assert.ok(received >= 30, `values received into recyclable buffers: ${received}`);
        assert.ok(recycled >= 10, `received buffers back in a pool: ${recycled} of ${received}`);
      });
    }
  }

  test('values received into recycled buffers and read from the copy kept for later readers: no reader sees a reused buffer', async () => {
    for (const lanes of [1, 2]) {
      const before = { ...recycling };
      const r = await runFile(program('recycle_copies'), { nodes: 2, lanes, args: ['4', '40'], mesh: (m) => { m.allocPayload = receivedPayload; } });
      const why = `${lanes} lane(s): ok ${r.ok} ${r.message ?? ''}\n${r.stdout.join('\n')}`;
      assert.equal(r.ok, true, why);
      assert.deepEqual(r.stdout, ['recycle_copies ok chains=4 n=40'], why);
      // the received buffers went back to a pool once their readers and the copy were done (the
      // next outputs or arrivals of their class took them, whichever came first)
      const received = recycling.received - before.received, recycled = recycling.receivedRecycled - before.receivedRecycled;
      assert.ok(received >= 100 && recycled >= received / 2, `${lanes} lane(s): received ${received}, of them back in a pool ${recycled}`);
    }
  });

  test('the examples\' matmul on 2 in-process nodes × 2 lanes, lagged', async () => {
    for (let i = 0; i < 3; i++) {
      const r = await runFile('examples/matmul/matmul.fa', { nodes: 2, lanes: 2, lagged: true, args: ['64', '4'] });
      assert.equal(r.ok, true, `ok ${r.ok} ${r.message ?? ''}\n${r.stdout.join('\n')}`);
      assert.deepEqual(r.stdout, ['matmul: OK (n=64, 4x4 blocks)']);
    }
  });
});
