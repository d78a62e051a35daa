// Several lanes on one node begin in the one-lane FIFO order while no worker is wanted, and leave
// it once more CFs park than the policy allows (fifoStartParked): the FIFO pump unrolls a loop
// whole, and a program whose loops it had unrolled before its workers were wanted ran as a few
// long fed batches (held_views, 4–6× slower). In-process, no workers: the counts are exact.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runInProcess, type HarnessRun } from './harness.js';
import { DefaultPolicy } from '../../src/runtime/policy/default.js';
import type { NodeRuntime } from '../../src/runtime/node/runtime.js';
import { CHAINS } from './tiny-chains.js';

/** A loop of readers spawned before the chain that makes what they read: every reader parks. */
const READERS_FIRST = `import c_start(name \`x) as start;
import c_step(value \`prev, name \`next) as step;
import c_read(int \`i, value \`v) as read;
sub main(int n)
{
    df x;
    for i = 0..n-1 cf r[i]: read(i, x[i]);
    cf s: start(x[0]);
    for i = 0..n-2 cf l[i]: step(x[i], x[i + 1]);
}
`;

type In = { getInt(): number };
type Out = { setInt(v: number): void };
/** the most CFs parked on the node when a step ran */
let node: NodeRuntime | null = null, peakParked = 0;
const ucodes = (seen: number[]) => ({
  c_start: (x: Out) => x.setInt(0),
  c_step: (p: In, x: Out) => { peakParked = Math.max(peakParked, node!.st.waiting.size); x.setInt(p.getInt() + 1); },
  c_show: (j: number, v: In) => { seen.push(j * 1e6 + v.getInt()); },
  c_read: (i: number, v: In) => { if (v.getInt() !== i) throw new Error(`r[${i}] read ${v.getInt()}`); seen.push(i); },
});

async function run(src: string, lanes: number, args: number[], seen: number[]): Promise<HarnessRun> {
  peakParked = 0;
  const r = await runInProcess(src, ucodes(seen), { lanes, inline: true, unbooted: true, args: args.map(String), observe: (rt) => { node = rt; } });
  assert.ok(r.ok, r.ok ? '' : r.message);
  assert.equal(r.lanes.sent.length, 0, 'every CF ran on the system thread');
  return r;
}

test('tiny chains on 2 unbooted lanes are examined and woken as on 1 lane (the FIFO start)', async () => {
  const s1: number[] = [], s2: number[] = [];
  const one = await run(CHAINS, 1, [8, 500], s1);
  const two = await run(CHAINS, 2, [8, 500], s2);
  const want = Array.from({ length: 8 }, (_, j) => j * 1e6 + 500);
  assert.deepEqual([...s1].sort((a, b) => a - b), want);
  assert.deepEqual(s2, s1, 'the same output order as one lane');
  // the several-lane pump woke 131 of 8 × 2 000 (each chain's steps spawned ahead and parked)
  assert.equal(two.rt.stats.woken, one.rt.stats.woken);
  // a loop begun in FIFO order on several lanes spawns at most fifoStartParked + 1 iterations at
  // a time: one more visit of the loop per chunk than on one lane
  const parked = new DefaultPolicy().fifoStartParked;
  assert.ok(two.rt.stats.examined >= one.rt.stats.examined && two.rt.stats.examined <= one.rt.stats.examined + Math.ceil((8 * 500) / (parked + 1)) + 8,
    `examined ${two.rt.stats.examined} on 2 lanes against ${one.rt.stats.examined} on 1`);
  assert.equal(two.rt.st.fifo, true, 'nothing parked: the node stayed in the FIFO order');
});

test('a loop whose CFs park leaves the FIFO start before it is unrolled whole', async () => {
  const n = 3000;
  const parked = new DefaultPolicy().fifoStartParked;
  const s1: number[] = [], s2: number[] = [];
  await run(READERS_FIRST, 1, [n], s1);
  const onePeak = peakParked;
  const two = await run(READERS_FIRST, 2, [n], s2);
  const twoPeak = peakParked;
  for (const s of [s1, s2]) assert.deepEqual([...s].sort((a, b) => a - b), Array.from({ length: n }, (_, i) => i));
  // one lane (FIFO) spawns every reader before the chain: all but the first are parked at once
  assert.equal(onePeak, n - 1);
  // on several lanes the node left the FIFO order once fifoStartParked CFs parked, and the
  // several-lane pump unrolled the rest of the readers' loop as the chain ran (a FIFO start that
  // left the loop unrolled whole held all n − 1 parked, as one lane does)
  assert.equal(two.rt.st.fifo, false, 'the node left the FIFO order');
  assert.ok(twoPeak > parked && twoPeak < n / 4, `at most ${twoPeak} of ${n} readers parked at once`);
});
