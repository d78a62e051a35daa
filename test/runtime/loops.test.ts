// Several lazily unrolled loops on several lanes: each loop keeps CFs spawned ahead of what its
// lanes run, so independent chains run side by side instead of one after the other.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runInProcess } from './harness.js';

/** `c` independent chains of `n` links; every link says which chain it belongs to. */
const CHAINS = `import c_start(name \`x) as start;
import c_step(value \`prev, int \`j, name \`next) as step;
import c_check(int \`j, int \`n, value \`last) as check;
sub chain(int j, int n, name x)
{
    start(x[0]) @ { req_count x[0] = 1; };
    for i = 0..n-1
        step(x[i], j, x[i + 1]) @ { req_count x[i + 1] = 1; };
    check(j, n, x[n]);
}
sub main(int c, int n)
{
    df x;
    for j = 0..c-1
        chain(j, n, x[j]);
}
`;

type In = { getInt(): number };
type Out = { setInt(v: number): void };

async function runChains(c: number, n: number): Promise<{ order: number[]; batches: number }> {
  const order: number[] = [];
  const checked: number[] = [];
  const r = await runInProcess(CHAINS, {
    c_start: (x: Out) => x.setInt(0),
    c_step: (prev: In, j: number, next: Out) => { order.push(j); next.setInt(prev.getInt() + 1); },
    c_check: (j: number, m: number, last: In) => { if (last.getInt() !== m) throw new Error(`chain ${j}: ${last.getInt()}`); checked.push(j); },
  }, { lanes: 2, args: [String(c), String(n)] });
  assert.ok(r.ok, r.ok ? '' : r.message);
  assert.equal(checked.length, c);
  assert.equal(order.length, c * n);
  return { order, batches: r.lanes.sent.length };
}

test('two independent chains on two lanes run side by side, not one after the other', async () => {
  const n = 1500;
  const { order, batches } = await runChains(2, n);
  // the first half of all links run: each chain ran a fair share of them (unrolling only the
  // first loop gave the second its first chunk, then nothing until the first was spawned whole)
  const half = order.slice(0, n);
  for (const j of [0, 1]) {
    const mine = half.filter((x) => x === j).length;
    assert.ok(mine >= n / 3, `chain ${j} ran ${mine} of the first ${n} links`);
  }
  // the lanes still get long batches: a chain's links follow each other on their worker
  assert.ok(batches <= (2 * n) / 10, `${batches} batches for ${2 * n} links`);
});
