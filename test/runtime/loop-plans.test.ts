// Loop plans on real worker threads (the default; src/runtime/node/loop-run.ts): a planned
// loop must compute what the fragment-by-fragment path computes — a two-column stencil, a chain
// on one lane, a loop whose outputs are read both inside it and after it — actually be planned,
// and a fault inside a planned step must name that step.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertFails, assertOk, describeRun, luna, timingOf, type Run } from './helpers.js';
import { PROGRAM, expected } from './stencil2.js';
import { UCODE_API } from '../ucode/fixtures.js';
import { CHAIN, ESCAPING, OUTSIDE, UCODES, chainExpected } from './plan-programs.js';

let dir = '';
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'luna-plans-'));
  writeFileSync(join(dir, 'ucodes.ts'), UCODES);
  writeFileSync(join(dir, 'stencil.fa'), PROGRAM);
  writeFileSync(join(dir, 'chain.fa'), CHAIN);
  // column 1's first value is never made: every step waits for it
  writeFileSync(join(dir, 'hang.fa'), PROGRAM.replace('for x = 0..1 init(x, v[0][x]);', 'for x = 0..0 init(x, v[0][x]);'));
  writeFileSync(join(dir, 'escaping.fa'), ESCAPING.replace(/req_count x\[i\] = 1/, 'req_count x[i] = 1'));
});
after(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

const run = (file: string, args: string[], plans: '0' | '1'): Promise<Run> =>
  luna(['run', '--warm-start', '--timing', '--threads', '2', join(dir, file), ...args], { env: { ...process.env, LUNA_LOOP_PLANS: plans }, timeoutMs: 90_000 });

const planned = (r: Run): number => timingOf<{ planned: number }>(r).planned;

// the windows sent as ranges (the lanes' workers build the steps from the plan) or, with
// LUNA_LOOP_RANGES=0, as tasks built on the system thread
const runRanges = (file: string, args: string[], ranges: '0' | '1'): Promise<Run> =>
  luna(['run', '--warm-start', '--timing', '--threads', '2', join(dir, file), ...args], { env: { ...process.env, LUNA_LOOP_PLANS: '1', LUNA_LOOP_RANGES: ranges }, timeoutMs: 90_000 });
const ranged = (r: Run): number => timingOf<{ plannedRanges: number }>(r).plannedRanges;

test('a planned loop built by the lanes from its plan computes and names its DFs as tasks built here and the unplanned path do', async () => {
  const steps = 60;
  const [range, tasks, off, chain, chainTasks] = await Promise.all([
    runRanges('stencil.fa', [String(steps), 'names'], '1'), runRanges('stencil.fa', [String(steps), 'names'], '0'), run('stencil.fa', [String(steps), 'names'], '0'),
    runRanges('escaping.fa', ['200'], '1'), runRanges('escaping.fa', ['200'], '0'),
  ]);
  const names = (r: Run): string[] => r.stdout.split('\n').filter((l) => l.startsWith('names ')).sort();
  const values = (r: Run): string[] => r.stdout.split('\n').filter((l) => l.startsWith('v[')).sort();
  for (const r of [range, tasks, off]) {
    assertOk(r);
    // a step's own output and its inputs from both lanes (one from before the loop at step 1)
    assert.deepEqual(names(r), ['names 1 0: v[0][0] v[0][1] v[1][0]', 'names 1 1: v[0][0] v[0][1] v[1][1]',
      'names 37 0: v[36][0] v[36][1] v[37][0]', 'names 37 1: v[36][0] v[36][1] v[37][1]'], describeRun(r));
    assert.deepEqual(values(r), expected(steps), describeRun(r));
  }
  for (const r of [chain, chainTasks]) { assertOk(r); assert.deepEqual(r.stdout.trim().split('\n').sort(), chainExpected(200, true), describeRun(r)); }
  for (const r of [range, tasks]) assert.equal(planned(r), 2 * steps, describeRun(r));
  assert.ok(ranged(range) > 0 && ranged(chain) > 0, describeRun(range));
  assert.equal(ranged(tasks) + ranged(chainTasks), 0, describeRun(tasks));
});

test('a stencil, a chain and a loop with escaping outputs compute the same planned and not', async () => {
  const steps = 300, n = 400;
  const [s1, s0, c1, c0, e1, e0] = await Promise.all([
    run('stencil.fa', [String(steps), 'ok'], '1'), run('stencil.fa', [String(steps), 'ok'], '0'),
    run('chain.fa', [String(n)], '1'), run('chain.fa', [String(n)], '0'),
    run('escaping.fa', [String(n)], '1'), run('escaping.fa', [String(n)], '0'),
  ]);
  for (const [r, want] of [[s1, expected(steps)], [s0, expected(steps)], [c1, chainExpected(n, false)], [c0, chainExpected(n, false)], [e1, chainExpected(n, true)], [e0, chainExpected(n, true)]] as const) {
    assertOk(r);
    assert.deepEqual(r.stdout.trim().split('\n').sort(), want, describeRun(r));
  }
  // every step planned (a loop is planned as it begins, before any of it is unrolled) but the
  // stencil's two init steps: a loop of their own, independent, of one site (below); none when off
  for (const [r, all] of [[s1, 2 * steps], [c1, n], [e1, n]] as const) assert.equal(planned(r), all, describeRun(r));
  for (const r of [s0, c0, e0]) assert.equal(planned(r), 0, describeRun(r));
});

// independent chains, each a sub's loop, begun by an outer loop: each is planned from its first link
const CHAINS = `import c_start(name \`v) as start;
import c_link(value \`a, int \`i, name \`v) as link;
import c_show(int \`i, value \`v) as show;
sub chain(int n, int j, name x)
{
    start(x[0]);
    for i = 0..n-1
        cf l[i]: link(x[i], i, x[i + 1]) @ { req_count x[i + 1] = 1; };
    show(j, x[n]);
}
sub main(int c, int n)
{
    df x;
    for j = 0..c-1
        chain(n, j, x[j]);
}
`;

test('chains begun by a loop: every link of every chain planned, the same results as unplanned', async () => {
  const c = 4, n = 150;
  writeFileSync(join(dir, 'chains.fa'), CHAINS);
  const [on, off] = await Promise.all([run('chains.fa', [String(c), String(n)], '1'), run('chains.fa', [String(c), String(n)], '0')]);
  const last = chainExpected(n, false)[0]!.replace(/^x\[\d+\]/, '');
  const want = Array.from({ length: c }, (_, j) => `x[${j}]${last}`).sort();
  for (const r of [on, off]) {
    assertOk(r);
    assert.deepEqual(r.stdout.trim().split('\n').sort(), want, describeRun(r));
  }
  assert.equal(planned(on), c * n, describeRun(on));
  assert.equal(timingOf<{ plannedLoops: number }>(on).plannedLoops, c, describeRun(on));
  assert.equal(planned(off), 0, describeRun(off));
});

test('a planned step that throws fails the run, naming the step as the unplanned path does', async () => {
  // (step 37 is planned: every step is)
  const [on, off] = await Promise.all([run('stencil.fa', ['200', 'throw'], '1'), run('stencil.fa', ['200', 'throw'], '0')]);
  for (const r of [on, off]) {
    assertFails(r, [/exception in ucode c_step: boom at step 37/, /in CF b\[37\] \(ucode c_step, id 1_37_1\)/]);
    assert.doesNotMatch(r.stdout, /v\[/);
  }
});

test('a planned loop whose first steps wait for a DF nobody makes is named in the hang report', async () => {
  const r = await run('hang.fa', ['300', 'ok'], '1');
  // (planned before any step is unrolled, the loop itself reads the first step's inputs: the one never made)
  assertFails(r, [/the program hangs/, /CF _l\d+ \(for, id \d+\) at [^\n]*hang\.fa:8:5 waits for v\[0\]\[1\]\n/, /waits for v\[300\]\[1\]/]);
  // (the init loop, two independent steps, is not: too few to spread over the lanes)
  assert.equal(timingOf<{ plannedLoops: number }>(r).plannedLoops, 1, describeRun(r));
});

// independent steps of one site: the plan spreads them over both lanes in blocks, as the
// unplanned path spreads them (each site on its own lane, the whole loop ran on one); each step
// prints the lane that ran it
const INDEPENDENT = `import c_sq(int \`i, name \`v) as sq;
import c_show(int \`i, value \`v) as show;
sub main(int n)
{
    df y;
    for i = 0..n-1
        cf q[i]: sq(i, y[i]) @ { req_count y[i] = 1; };
    for i = 0..n-1
        show(i, y[i]);
}
`;
const LANE_UCODES = `import { context } from ${JSON.stringify(UCODE_API)};
type In = { getInt(): number };
type Out = { setInt(v: number): void };
export function c_sq(i: number, v: Out): void {
  const until = performance.now() + 0.1;
  while (performance.now() < until) { /* work */ }
  console.log('lane ' + context().lane);
  v.setInt(i * i);
}
export function c_show(i: number, v: In): void { console.log('x[' + i + '] = ' + v.getInt()); }
`;

test('a loop of independent steps of one site is planned spread over the lanes, built by them or not', async () => {
  mkdirSync(join(dir, 'spread'), { recursive: true });
  writeFileSync(join(dir, 'spread', 'independent.fa'), INDEPENDENT);
  writeFileSync(join(dir, 'spread', 'ucodes.ts'), LANE_UCODES);
  const go = (ranges: '0' | '1'): Promise<Run> => luna(['run', '--warm-start', '--timing', '--threads', '2', join(dir, 'spread', 'independent.fa'), '300'], { env: { ...process.env, LUNA_LOOP_PLANS: '1', LUNA_LOOP_RANGES: ranges }, timeoutMs: 90_000 });
  const [range, tasks] = await Promise.all([go('1'), go('0')]);
  for (const r of [range, tasks]) {
    assertOk(r);
    const lines = r.stdout.trim().split('\n');
    assert.deepEqual(lines.filter((l) => l.startsWith('x[')).sort(), Array.from({ length: 300 }, (_, i) => `x[${i}] = ${i * i}`).sort(), describeRun(r));
    assert.equal(planned(r), 300, describeRun(r));
    // both worker lanes ran steps (lanes 1 and 2; the system thread is 0)
    const lanes = new Set(lines.filter((l) => l.startsWith('lane ')));
    assert.deepEqual([...lanes].sort(), ['lane 1', 'lane 2'], describeRun(r));
  }
  assert.ok(ranged(range) > 0 && ranged(tasks) === 0, describeRun(range));
});

// A DF the plan keeps inside the loop (read up there) named once more from outside it: read
// again or assigned again, before the loop made it (main's own statement, waiting or posted)
// or after (a sub that waits for the loop's last output). Unplanned, the store reports it; a
// planned loop must report the same, not hang or pass.
const MISUSES = {
  'read after': ['later(x[n], x, 1000);', /too many requests for DF x\[1000\]: it was freed after its req_count requests were served[^\n]*\n {2}in CF _l\d+ \(ucode c_show/],
  // (which reader is served first, unplanned, depends on when the loop reaches it: either words)
  'read before': ['show(n, x[n]); show(1000, x[1000]);', /too many requests for DF x\[1000\]: [^\n]*\(Too many requests\)\n {2}in CF l\[1000\] \(ucode c_link/],
  'assigned after': ['again(x[n], x, 1000);', /DF x\[1000\] is assigned twice \(Duplicate id in post\): it was assigned before, and freed[^\n]*\n {2}in CF _l\d+ \(ucode c_start/],
  'assigned before': ['show(n, x[n]); start(x[1000]);', /DF x\[1000\] is assigned twice \(Duplicate id in post\): it already holds the value of CF _l\d+ \(ucode c_start\)[^\n]*\n {2}in CF l\[999\] \(ucode c_link/],
} as const;

test('a DF kept inside a planned loop, read or assigned again from outside it, is reported as unplanned', async () => {
  for (const [name, [tail, want]] of Object.entries(MISUSES)) {
    const file = `misuse-${name.replace(' ', '-')}.fa`;
    writeFileSync(join(dir, file), OUTSIDE(`    ${tail}`));
    const [on, off] = await Promise.all([run(file, ['2000'], '1'), run(file, ['2000'], '0')]);
    const errors = (r: Run): string => r.stderr.split('\n').filter((l) => !l.startsWith('luna: timing:')).join('\n')
      .replace(/: (it was freed after its req_count requests were served|its req_count \d+ was served to the requests that came first) \(Too many/, ': (served first) (Too many');
    for (const r of [on, off]) assertFails(r, [want]);
    assert.equal(errors(on), errors(off), `${name}\n${describeRun(on)}`);
    assert.ok(planned(on) > 1000, `${name}: planned ${planned(on)}\n${describeRun(on)}`);
  }
});

test('plans are the default: a run without LUNA_LOOP_PLANS plans the chain', async () => {
  const env = { ...process.env };
  delete env['LUNA_LOOP_PLANS'];
  const r = await luna(['run', '--timing', '--threads', '2', join(dir, 'chain.fa'), '400'], { env, timeoutMs: 90_000 });
  assertOk(r);
  assert.deepEqual(r.stdout.trim().split('\n'), chainExpected(400, false), describeRun(r));
  assert.ok(planned(r) > 200, `planned ${planned(r)}\n${describeRun(r)}`);
  // the links read up by the next one are recorded spent by numbers when their batches are booked
  const kept = timingOf<{ plannedKept: number }>(r).plannedKept;
  assert.ok(kept >= 0.9 * planned(r), `kept by numbers ${kept} of ${planned(r)} planned\n${describeRun(r)}`);
});

// (traced runs are planned: test/trace/planned-loops.test.ts compares their traces)
test('one thread and 2 nodes are not planned, and compute the same', async () => {
  const steps = 120, file = join(dir, 'stencil.fa'), env = { ...process.env, LUNA_LOOP_PLANS: '1' };
  const go = (opts: string[]): Promise<Run> => luna(['run', '--timing', ...opts, file, String(steps), 'ok'], { env, timeoutMs: 90_000 });
  const [one, nodes] = await Promise.all([
    go(['--threads', '1']),
    go(['--nodes', '2', '--threads', '2']),
  ]);
  for (const r of [one, nodes]) {
    assertOk(r);
    assert.deepEqual(r.stdout.trim().split('\n').sort(), expected(steps), describeRun(r));
  }
  assert.equal(planned(one), 0, describeRun(one));
  // (several nodes: --timing reports node 0's counters)
  assert.doesNotMatch(nodes.stderr, /"plannedLoops":[1-9]/, describeRun(nodes));
});

test("the CFs after a planned loop that read its last outputs are fed from its last window by the lanes' workers", async () => {
  // Without: they became ready only once the last window's results had come back through the
  // system thread, and every input they read was handed over by it (the prints here: 2). The last
  // step sleeps 200 ms: the last window is still out when this thread gets to the prints, also on
  // a loaded host where a worker could finish it first.
  const steps = 300;
  const [r, tasks] = await Promise.all([runRanges('stencil.fa', [String(steps), `late:${steps}`], '1'), runRanges('stencil.fa', [String(steps), `late:${steps}`], '0')]);
  for (const x of [r, tasks]) {
    assertOk(x);
    assert.deepEqual(x.stdout.trim().split('\n').sort(), expected(steps), describeRun(x));
    const t = timingOf<{ handWorker: number; handSystem: number; planned: number }>(x);
    assert.equal(t.planned, 2 * steps, describeRun(x));
    // the steps' own hand-offs: all but step 1's by the workers; then at least one print fed (both
    // unless a lane was full each time the policy was asked, until that window came back)
    assert.ok(t.handWorker >= 2 * steps - 1, `handWorker ${t.handWorker}\n${describeRun(x)}`);
  }
});
