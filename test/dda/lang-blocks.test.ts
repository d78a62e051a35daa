// Several blocks a node in LuNA (docs/language.md §9.11): `dynamic P(e) @ { blocks: b; }` and
// `P[j]` as a block argument, run for real on worker threads, in process on 1 and 2 nodes (traced:
// each block's arrival is a span), and a block index past the array's blocks stops the run
// naming the array and the CF.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readTrace } from '../../src/trace/merge.js';
import { DDA_OPS } from '../../src/trace/schema.js';
import { dynamicArrays } from '../../src/runtime/dda/index.js';
import { fixture, runWithResource } from '../ucode/fixtures.js';

const PROGRAM = `
import c_fill(block \`P, int \`n, name \`made) as fill;
import c_work(block \`P, value \`spread, int \`j, name \`s) as work;
import c_add(value \`a, value \`b, name \`sum) as add;
import c_zero(name \`z) as zero;
import c_check(value \`sum, value \`count, int \`n) as check;

sub main(int n, int nodes, int b)
{
    df made, spread, s, acc, count;
    dynamic P(16) @ { blocks: b; };
    cf f: fill(P[0], n, made) @ { locator_cyclic: 0; };          // every element in node 0's block 0
    rearrange(P, 0, nodes - 1, spread) @ { request made; };      // each node's share over its b blocks
    for k = 0..nodes-1
        for j = 0..b-1
            cf w[k][j]: work(P[j], spread, j, s[k * b + j]) @ { locator_cyclic: k; };
    zero(acc[0]);
    for i = 0..nodes*b-1
        add(acc[i], s[i], acc[i + 1]);
    global_count(P, count) @ { request acc[nodes * b]; };
    check(acc[nodes * b], count, n);
}
`;

const UCODES = `
export function c_fill(P, n, made) {
  P.resize(n * 16);
  const f = new Float64Array(P.addElement(n).buffer, 0, 2 * n);
  for (let i = 0; i < n; i++) { f[2 * i] = i; f[2 * i + 1] = 3 * i + 1; }
  made.setInt(n);
}
// each CF holds its own block: its index is the one it named, and its elements are intact
export function c_work(P, spread, j, s) {
  if (P.getBlockIndex() !== j) throw new Error('block ' + P.getBlockIndex() + ' held for P[' + j + ']');
  const f = P.f64();
  let sum = 0;
  for (let i = 0; i < f.length; i += 2) { if (f[i + 1] !== 3 * f[i] + 1) throw new Error('element ' + f[i] + ' corrupted'); sum += f[i]; }
  s.setReal(sum);
}
export function c_add(a, b, sum) { sum.setReal(a.getReal() + b.getReal()); }
export function c_zero(z) { z.setReal(0); }
export function c_check(sum, count, n) {
  if (count.getInt() !== n || sum.getReal() !== n * (n - 1) / 2) throw new Error('sum ' + sum.getReal() + ', count ' + count.getInt());
}
`;

for (const nodes of [1, 2]) {
  test(`blocks: 4 and P[j] in LuNA on ${nodes} node(s): each node's share spread over its 4 blocks, each held by its own CF; arrivals traced`, async (t) => {
    const dir = fixture(t, { 'prog.fa': PROGRAM, 'ucodes.ts': UCODES });
    const layer = dynamicArrays();
    const n = 400;
    const ran = await runWithResource(dir, { nodes, threads: 2, args: [String(n), String(nodes), '4'], traced: true, layers: [layer] });
    for (const r of ran.results) assert.equal(r.ok, true, r.message);
    const share = n / nodes / 4;
    for (let k = 0; k < nodes; k++) assert.deepEqual(layer.nodes[k]!.blocks('P').map((b) => b.getNumel()), [share, share, share, share]);
    // the receiving blocks were freed one by one as their parts came: a span each
    const events = [...readTrace(ran.trace!).events];
    const arrivals = events.filter((e) => e.kind === 'ddaOp' && DDA_OPS[e.op] === 'rearrange (block)');
    if (nodes === 2) {
      // node 1's four blocks over the network, node 0's blocks 1-3 from its block 0
      assert.deepEqual(arrivals.map((e) => (e.kind === 'ddaOp' ? e.array : '')).sort(), ['P[0]', 'P[1]', 'P[1]', 'P[2]', 'P[2]', 'P[3]', 'P[3]']);
      assert.ok(arrivals.every((e) => e.kind === 'ddaOp' && e.rearranged === share * 16), 'each block received its share');
    }
  });
}

test('P[j] past the array\'s blocks stops the run naming the array and the call', async (t) => {
  const dir = fixture(t, {
    'prog.fa': `
import c_fill(block \`P, int \`n, name \`made) as fill;
sub main()
{
    df made;
    dynamic P(16) @ { blocks: 2; };
    cf f: fill(P[2], 4, made);
}
`,
    'ucodes.ts': UCODES,
  });
  const ran = await runWithResource(dir, { nodes: 1, threads: 1, layers: [dynamicArrays()] });
  const failed = ran.results.find((r) => !r.ok);
  assert.ok(failed, 'the run fails');
  assert.match(failed.message ?? '', /blockOf\(P, 2\): the array has 2 block\(s\) a node \(0\.\.1\)/);
  assert.match(failed.message ?? '', /ucode luna:block_of/);
  assert.match(failed.message ?? '', /prog\.fa:7:5/);
});
