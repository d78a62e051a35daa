// A chain on a worker runs on while the system thread is late: its next batches are sent behind
// the running one (the policy's chainDepth), each taking its first input from the batch before it
// on the worker. And the workers account for their time between CFs (`--timing` laneGapNs,
// laneWaits, laneWaitNs, fedWaitNs). Real worker threads; the counts come from `--timing`.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BOOT_ONLY, assertOk, describeRun, luna, timingOf, type Run } from './helpers.js';

// Every link does ~1 ms of work (tiny codes would run on the system thread): batches of ~8 links.
const UCODES = `
type In = { getInt(): number };
type Out = { setInt(v: number): void };
export function c_start(v: Out): void { v.setInt(1); }
export function c_step(us: number, a: In, v: Out): void {
  const until = performance.now() + us / 1000;
  while (performance.now() < until) { /* work */ }
  v.setInt((a.getInt() * 3 + 1) % 1000003);
}
export function c_print(v: In): void { console.log('last = ' + v.getInt()); }
`;

const CHAIN = `import c_start(name \`v) as start;
import c_step(int \`us, value \`a, name \`v) as step;
import c_print(value \`v) as print;
sub main(int n, int us)
{
    df x;
    start(x[0]);
    for i = 0..n-1
        cf link[i]: step(us, x[i], x[i + 1]) @ { req_count x[i + 1] = 1; };
    print(x[n]);
}
`;

function expected(n: number): string {
  let v = 1;
  for (let i = 0; i < n; i++) v = (v * 3 + 1) % 1000003;
  return `last = ${v}`;
}

interface Counts {
  sent: number; batches: number; chainAhead: number; laneGapNs: number; laneWaits: number; laneWaitNs: number; fedWaitNs: number;
  laneSleeps: number; fedNone: number; fedSpun: number; fedSlept: number;
}

const counts = (r: Run): Counts => timingOf<Counts>(r);

let dir = '';
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'luna-chain-depth-'));
  writeFileSync(join(dir, 'ucodes.ts'), UCODES);
  writeFileSync(join(dir, 'chain.fa'), CHAIN);
});
after(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

const run = (threads: number, n: number, us: number, env: NodeJS.ProcessEnv = {}): Promise<Run> =>
  luna(['run', '--warm-start', '--timing', '--threads', String(threads), join(dir, 'chain.fa'), String(n), String(us)], { env: { ...process.env, ...BOOT_ONLY, ...env }, timeoutMs: 90_000 });

/** What any run's lane accounting must satisfy. */
function consistent(c: Counts, r: Run): void {
  const why = `${JSON.stringify(c)}\n${describeRun(r)}`;
  assert.ok(c.laneGapNs > 0, why);
  // waits for a batch and for fed values are parts of the time between CFs
  assert.ok(c.laneWaitNs + c.fedWaitNs <= c.laneGapNs * 1.0001, why);
  assert.equal(c.laneWaitNs > 0, c.laneWaits > 0, why);
  // a fed wait takes time exactly when the value was not there yet
  assert.equal(c.fedWaitNs > 0, c.fedSpun + c.fedSlept > 0, why);
}

test('a chain keeps more than one batch queued behind its running one, and computes the same', async () => {
  const n = 300, us = 1000;
  // the fed path's chain reserve: a planned loop (node/loop-run.ts) queues no chain, so plans off
  const fedPath = { LUNA_LOOP_PLANS: '0' };
  const [deep, shallow] = await Promise.all([run(2, n, us, fedPath), run(2, n, us, { ...fedPath, LUNA_CHAIN_AHEAD_MS: '0' })]);
  for (const r of [deep, shallow]) {
    assertOk(r);
    assert.equal(r.stdout.trim(), expected(n), describeRun(r));
  }
  const d = counts(deep), s = counts(shallow);
  // ~8 links a batch: the lane holds up to three batches behind the running one (the policy's
  // CHAIN_AHEAD_NS), and the system thread, with nothing else to do, tops it up
  assert.ok(d.chainAhead >= 3 && d.chainAhead <= 4, `chainAhead ${d.chainAhead}\n${describeRun(deep)}`);
  // with no reserve asked, one batch queued behind the running one, as the lane depth
  assert.ok(s.chainAhead <= 2, `chainAhead ${s.chainAhead}\n${describeRun(shallow)}`);
  for (const [c, r] of [[d, deep], [s, shallow]] as const) consistent(c, r);
});

test('one thread: FIFO order keeps its own depth, and the accounting holds', async () => {
  const r = await run(1, 60, 500);
  assertOk(r);
  assert.equal(r.stdout.trim(), expected(60), describeRun(r));
  const c = counts(r);
  assert.equal(c.chainAhead, 0, describeRun(r));
  consistent(c, r);
});
