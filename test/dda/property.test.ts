// The property of the dynamic array: random sequences of add / remove / send by destination /
// resize / rearrange (equal, weighted, between neighbours) / count on 1–4 in-process nodes, one to three blocks a node (a holder takes
// one of its node's blocks; a rearrangement frees each receiving block as soon as its parts are
// in, while others still arrive), several operations in flight at once, every element carrying
// its own id and checksum; at the end nothing is lost, nothing duplicated, nothing corrupted,
// and the global count agrees. CI runs DDA_SEQUENCES (default 150) sequences; the full count:
//   DDA_SEQUENCES=10000 node --import ./dist/test/setup.js --test dist/test/dda/property.test.js
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Nodes } from './nodes.js';
import { rng } from '../lang/generators.js';

const SEQUENCES = Number(process.env.DDA_SEQUENCES ?? 150);
const OPS = 12;

const check = (id: number): number => (id * 2654435761) % 4294967291;
/** blocks freed by a rearrangement before its end, over every sequence */
let earlyFreed = 0;
/** rearrangements between neighbours of arrays with several blocks a node on 3–4 nodes (a node may forward) */
let neighbourBlocks = 0;
/** parts whose memory an empty receiving block kept, over every sequence */
let adopted = 0;

export async function sequence(seed: number, onLog?: (l: string[], ns: Nodes) => void): Promise<void> {
  const r = rng(seed);
  const int = (n: number): number => Math.floor(r() * n);
  const size = 1 + int(4);
  // odd seeds receive payloads in shared memory of their own, as node processes do (an empty
  // block then keeps a part's memory)
  const ns = new Nodes(size, { sharedPayloads: seed % 2 === 1 });
  const order = r() < 0.5 ? 'ordered' : 'unordered';
  // half the sequences one block a node, the others 2 or 3
  const blocks = r() < 0.5 ? 1 : 2 + int(2);
  ns.declare({ name: 'A', elsize: 16, capacity: int(8), order, home: int(size), blocks });
  const live = new Set<number>();
  let nextId = 1;
  const log: string[] = [];
  onLog?.(log, ns);
  const op = async (): Promise<void> => {
    const node = int(size);
    const k = r();
    if (k < 0.55) {
      const h = await ns.acquire(node, 'A', undefined, int(blocks));
      const b = h.block;
      const what = r();
      if (what < 0.5) {
        const n = 1 + int(6);
        let v = b.addElement(n);
        if (v === null) { assert.ok(b.resize((b.getNumel() + n + int(4)) * 16)); v = b.addElement(n)!; }
        const f = new Float64Array(v.buffer, v.byteOffset, 2 * n);
        for (let i = 0; i < n; i++) { const id = nextId++; f[2 * i] = id; f[2 * i + 1] = check(id); live.add(id); }
        log.push(`add ${n} on ${node}`);
      } else if (what < 0.75) {
        const f = b.f64();
        for (let i = 0; i < b.getNumel(); i++) if (r() < 0.3) { b.remElement(i); live.delete(f[2 * i]!); }
        log.push(`remove on ${node}`);
      } else if (what < 0.87) {
        // elements sent by destination (to the GD's node too: they travel in its REPORT); the
        // next global operation delivers them
        const d = b.destinations();
        for (let i = 0; i < b.getNumel(); i++) d[i] = r() < 0.4 ? int(size) : -1;
        log.push(`send on ${node}`);
      } else {
        const bytes = b.getNumel() * 16 + int(5) * 16;
        assert.ok(b.resize(bytes));
        log.push(`resize ${bytes} on ${node}`);
      }
      // the holder keeps the block a few turns: global operations wait for it
      for (let i = int(4); i > 0; i--) await new Promise((res) => setImmediate(res));
      ns.release(node, 'A', h);
    } else if (k < 0.9) {
      const nodes = [...Array(size).keys()].filter(() => r() < 0.6);
      if (nodes.length === 0) nodes.push(int(size));
      nodes.sort(() => r() - 0.5);
      const neighbours = r() < 0.2, weights = r() < 0.2 ? nodes.map(() => 1 + int(3)) : undefined;
      log.push(`rearrange onto ${nodes} from ${node}${neighbours ? ' between neighbours' : ''}${weights ? ` weighted ${weights}` : ''}`);
      if (neighbours && blocks > 1 && size > 2) neighbourBlocks++;
      await ns.rearrange(node, 'A', nodes, { neighbours, weights });
    } else {
      log.push(`count from ${node}`);
      await ns.count(node, 'A');
    }
  };
  try {
    for (let i = 0; i < OPS; i += 3) await Promise.all([op(), op(), op()]);
    const total = await ns.count(0, 'A');
    const seen: number[] = [];
    for (const d of ns.dda) {
      for (const b of d.blocks('A')) {
        const f = b.f64();
        for (let i = 0; i < f.length; i += 2) { assert.equal(f[i + 1], check(f[i]!), `element ${f[i]} corrupted`); seen.push(f[i]!); }
      }
      earlyFreed += d.earlyFreed;
      adopted += d.adoptedParts;
    }
    assert.equal(new Set(seen).size, seen.length, 'an element is duplicated');
    assert.deepEqual(seen.sort((a, b) => a - b), [...live].sort((a, b) => a - b), 'elements lost or invented');
    assert.equal(total, live.size, 'the global count');
  } catch (e) {
    throw new Error(`seed ${seed}, ${size} node(s), ${blocks} block(s) a node, ${order}: ${(e as Error).message}\n  ${log.join('\n  ')}`);
  } finally {
    await ns.close();
  }
}

test(`${SEQUENCES} random sequences of add / remove / send / resize / rearrange / count on 1–4 nodes: nothing lost, duplicated or corrupted`, async () => {
  const first = Number(process.env.DDA_SEED ?? 1);
  for (let s = first; s < first + SEQUENCES; s++) await sequence(s);
  // the sequences with several blocks a node did free receiving blocks before the end of their rearrangement
  if (SEQUENCES >= 50) assert.ok(earlyFreed > 0, 'no block was freed before its rearrangement ended');
  // and drew moves between neighbours with several blocks a node, where a node may forward
  if (SEQUENCES >= 50) assert.ok(neighbourBlocks > 0, 'no rearrangement between neighbours of several blocks a node on 3 or more nodes');
  // and empty blocks kept the memory of parts received into shared memory
  if (SEQUENCES >= 50) assert.ok(adopted > 0, 'no empty block kept a part\'s memory');
});
