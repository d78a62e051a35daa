// Dynamic arrays declared in LuNA (docs/language.md §9.11), run for real: the shipped example
// (examples/particles) through the CLI on one node and on two node processes over TCP, and
// in-process on 1 and 2 nodes with a trace (the rearrangements and the count make no worker
// thread wait: the system thread asks for them); an
// array declared in a sub called twice is two arrays; the operations' run-time refusals name
// the array and the CF.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readTrace } from '../../src/trace/merge.js';
import { DDA_OPS, WAIT_KINDS } from '../../src/trace/schema.js';
import { dynamicArrays } from '../../src/runtime/dda/index.js';
import { analyzeSlowTrace } from '../../src/analysis/slow/index.js';
import { fixture, runWithResource } from '../ucode/fixtures.js';

const EXAMPLE = 'examples/particles/particles.fa';
const example = (): Record<string, string> => ({
  'prog.fa': readFileSync(EXAMPLE, 'utf8'),
  // the example's type imports point into the repository; erased when bundled
  'ucodes.ts': readFileSync('examples/particles/ucodes.ts', 'utf8'),
});

for (const nodes of [1, 2]) {
  test(`the particles example through the CLI on ${nodes} node process(es)`, () => {
    const r = spawnSync(process.execPath, ['bin/luna', 'run', '--nodes', String(nodes), '--threads', '2', EXAMPLE, '600', String(nodes)], { encoding: 'utf8', timeout: 120_000 });
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, new RegExp(`particles: OK \\(n=600, ${nodes} node\\(s\\), 520 particles\\)`));
  });

  test(`the particles example in process on ${nodes} node(s): every node's share, then all on node 0; no worker thread waits for the rearrangements`, async (t) => {
    const dir = fixture(t, example());
    const layer = dynamicArrays();
    const ran = await runWithResource(dir, { nodes, threads: 2, args: ['900', String(nodes)], traced: true, layers: [layer] });
    for (const r of ran.results) assert.equal(r.ok, true, r.message);
    // n = 900: 600 kept + 180 children, gathered on node 0
    assert.deepEqual(layer.nodes.map((d) => d.block('P').getNumel()), [780, ...new Array(nodes - 1).fill(0)]);
    const events = [...readTrace(ran.trace!).events];
    // rearrange and global_count are asked by the system thread: the two rearrangements and the
    // count ran at the array's descriptor, and no worker thread waited for them (their waits,
    // if a lane had nothing else to do meanwhile, are written by the system thread that asked)
    const workers = events.filter((e) => e.kind === 'wait' && WAIT_KINDS[e.waitKind] === 'descriptor' && e.thread !== 0).map((e) => (e.kind === 'wait' ? e.resource : ''));
    assert.equal(events.filter((e) => e.kind === 'ddaOp' && DDA_OPS[e.op] === 'rearrange' && e.array === 'P').length, 2, 'the two rearrangements ran');
    assert.ok(!workers.includes('a rearrangement of dynamic array P'), workers.join('; '));
    assert.ok(events.some((e) => e.kind === 'ddaOp' && DDA_OPS[e.op] === 'count' && e.array === 'P'), 'the global count ran');
    assert.ok(!workers.includes('the global count of dynamic array P'), workers.join('; '));
    // and the asked count's CF sits on the timeline without damaging it
    const slow = analyzeSlowTrace(ran.trace!);
    assert.equal(slow.damage.total, 0, JSON.stringify(slow.damage.examples));
  });
}

const UCODES = `
export function c_fill(P, n, done) {
  if (P.getMaxNumel() - P.getNumel() < n) P.resize((P.getNumel() + n) * P.getElsize());
  const v = P.addElement(n);
  new Int32Array(v.buffer, v.byteOffset, n).fill(7);
  done.setInt(P.getNumel());
}
export function c_show(tag, x) { console.log(tag + ' ' + x.getInt()); }
`;

test('an array declared in a sub called twice is two arrays, named by the sub\'s execution', async (t) => {
  const dir = fixture(t, {
    'prog.fa': `
import c_fill(block \`P, int \`n, name \`done) as fill;
import c_show(string \`tag, value \`x) as show;
sub part(int n, name res)
{
    df done;
    dynamic P(4) @ { ordered; };
    fill(P, n, done);
    global_count(P, res) @ { request done; };
}
sub main()
{
    df a, b;
    part(3, a);
    part(5, b);
    show("a", a);
    show("b", b);
}
`,
    'ucodes.ts': UCODES,
  });
  const layer = dynamicArrays();
  const ran = await runWithResource(dir, { nodes: 1, threads: 2, layers: [layer] });
  assert.equal(ran.results[0]!.ok, true, ran.results[0]!.message);
  // the sub calls are main's statements 0 and 1: their blocks' arrays are P#0 and P#1
  assert.equal(layer.nodes[0]!.block('P#0').getNumel(), 3);
  assert.equal(layer.nodes[0]!.block('P#1').getNumel(), 5);
});

for (const [what, call, message] of [
  ['a node that is not in the run', 'rearrange(P, 0, 4, t)', /dynamic array P refused: rearrange of array P onto node 2, which is not a node of this run/],
  ['an empty range of nodes', 'rearrange(P, 1, 0, t)', /rearrange\(P, 1, 0\): no node from 1 to 0/],
] as const) {
  test(`rearranging onto ${what} stops the run naming the array and the CF`, async (t) => {
    const dir = fixture(t, {
      'prog.fa': `
import c_fill(block \`P, int \`n, name \`done) as fill;
import c_show(string \`tag, value \`x) as show;
sub main()
{
    df done, t;
    dynamic P(4);
    fill(P, 10, done);
    cf move: ${call} @ { request done; };
    show("t", t);
}
`,
      'ucodes.ts': UCODES,
    });
    const ran = await runWithResource(dir, { nodes: 2, threads: 1, layers: [dynamicArrays()] });
    const failed = ran.results.find((r) => !r.ok);
    assert.ok(failed, 'the run fails');
    assert.match(failed.message ?? '', message);
    assert.match(failed.message ?? '', /move/);
  });
}
