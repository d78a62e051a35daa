// The default scheduling policy alone: plain data in, decisions out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BATCH_NS, DefaultPolicy, FIRST_BATCH, INLINE_NS, INLINE_SAMPLES, BOOT_INLINE_NS, BOOT_INLINE_ONE_NODE_NS, BOOT_FIRST_CALL_NS, ALONE_INLINE_NS, HANDOFF_PROBE, LIVE_TARGET, LOOP_CHUNK, WAIT_AHEAD, ALONE_CHUNK, CALM_UNROLLS, FLUSH_BEFORE_NS, MAX_BATCH, FEED_DEPTH, FEED_SPREAD_NS, SPREAD_MIN_ITERATIONS, IDLE_SPIN_NS, FED_SPIN_NS, FED_SPIN_PRODUCER_NS, FED_STARVED_NS, RUN_LOW_NS, RESULT_SPIN_NS, LANE_SLEEP_NS, PIN_LANES, FED_RUN_NS, FED_TURN_NS, CHAIN_AHEAD_NS, CHAIN_DEPTH, LANE_DEPTH, PLAN_WINDOW_GROWTH, PLAN_WINDOWS } from '../../src/runtime/policy/default.js';
import { PlaybackPolicy } from '../../src/runtime/policy/playback.js';
import { ForwardingPolicy } from '../../src/runtime/policy/forward.js';
import { PriorityPolicy } from '../../src/runtime/policy/priority.js';

const p = new DefaultPolicy();
const sizing = { cfNs: 0, ready: 100, lanes: 2, nodes: 1, stealable: false, fifo: false };

test('batch size: a few CFs until their time is known, then about BATCH_NS of work, spread over the lanes', () => {
  assert.equal(p.batchSize(sizing), FIRST_BATCH);
  assert.equal(p.batchSize({ ...sizing, cfNs: 1000, ready: 1e6 }), MAX_BATCH, 'tiny CFs: capped');
  assert.equal(p.batchSize({ ...sizing, cfNs: BATCH_NS * 2 }), 1, 'long CFs one by one');
  assert.equal(p.batchSize({ ...sizing, cfNs: 10_000, ready: 8 }), 2, '8 ready over 2 lanes × 2 in flight');
  assert.equal(p.batchSize({ ...sizing, cfNs: 100_000, ready: 8, fifo: true }), BATCH_NS / 100_000, 'FIFO takes what the time allows');
  assert.equal(p.batchSize({ ...sizing, cfNs: 10_000, ready: 1e6, nodes: 2, stealable: true }), 2, 'stealable work stays small on several nodes');
  assert.equal(p.chainLength({ ...sizing, cfNs: 100_000, ready: 1 }), BATCH_NS / 100_000, 'a chain grows to the time a batch should take');
  assert.equal(p.chainLength({ ...sizing, cfNs: 0 }), FIRST_BATCH);
});

test('a chain keeps CHAIN_AHEAD_NS queued behind its running batch; long CFs and stealable work the lane depth', () => {
  const p = new DefaultPolicy({ chainAheadNs: CHAIN_AHEAD_NS });
  // 100 µs links: batches of BATCH_NS, three of them behind the running one
  assert.equal(p.chainDepth({ ...sizing, ready: 0, cfNs: 100_000 }), 1 + CHAIN_AHEAD_NS / BATCH_NS);
  assert.equal(new DefaultPolicy({ chainAheadNs: 2 * BATCH_NS }).chainDepth({ ...sizing, ready: 0, cfNs: 100_000 }), 3, 'the reserve in batches of the chain');
  assert.equal(p.chainDepth({ ...sizing, ready: 0, cfNs: 70_000 }), CHAIN_DEPTH, '70 µs: batches a little under BATCH_NS, capped');
  assert.equal(p.chainDepth({ ...sizing, ready: 0, cfNs: 10 }), CHAIN_DEPTH, 'batches of tiny CFs are capped by count, not by time: so is the depth');
  assert.equal(p.chainDepth({ ...sizing, ready: 0, cfNs: BATCH_NS }), LANE_DEPTH, 'CFs of a batch\'s length go one by one');
  assert.equal(p.chainDepth({ ...sizing, ready: 0, cfNs: 0 }), LANE_DEPTH, 'cost unknown yet');
  assert.equal(p.chainDepth({ ...sizing, ready: 0, cfNs: 70_000, nodes: 2, stealable: true }), LANE_DEPTH, 'what is queued on a lane cannot be given away');
  assert.equal(p.chainDepth({ ...sizing, cfNs: 70_000, ready: 1 }), LANE_DEPTH, 'other CFs ready: the lanes have work without the reserve');
  assert.equal(new DefaultPolicy({ chainAheadNs: 0 }).chainDepth({ ...sizing, ready: 0, cfNs: 70_000 }), LANE_DEPTH, 'no reserve: the lane depth');
  assert.equal(new DefaultPolicy({ chainAheadNs: BATCH_NS }).chainDepth({ ...sizing, ready: 0, cfNs: 100_000 }), LANE_DEPTH, 'one batch of reserve: the lane depth');
});

test('a planned loop\'s windows: the first holds FED_FIRST_NS of work, each next at most PLAN_WINDOW_GROWTH × what is in flight, up to a fed batch', () => {
  const firstNs = 1_000_000, cfNs = 40_000;
  const p = new DefaultPolicy({ fedRunNs: FED_RUN_NS, fedFirstNs: firstNs });
  const fed = { ...sizing, cfNs, cfMinNs: cfNs, fed: true };
  const full = p.chainLength(fed), first = Math.ceil(firstNs / cfNs);
  assert.ok(first * PLAN_WINDOW_GROWTH * 2 < full, 'the sizes below are between the first window and a full one');
  assert.equal(p.planWindow(fed, 0), first, 'nothing in flight: the first window');
  assert.equal(p.planWindow(fed, first), first * PLAN_WINDOW_GROWTH, 'then growing with what is in flight');
  assert.equal(p.planWindow(fed, full), full, 'up to a fed batch');
  assert.equal(p.planWindow({ ...fed, cfNs: 0, cfMinNs: Infinity }, 0), FIRST_BATCH, 'the cost unknown: a first batch');
  assert.ok(PLAN_WINDOWS >= 2 && p.planWindows === PLAN_WINDOWS, 'the next window is queued behind the running one');
});

test('a fed batch keeps its CF count under load: sized by the code\'s fastest execution, a plain batch by the mean', () => {
  const p = new DefaultPolicy({ fedRunNs: FED_RUN_NS });
  const quiet = p.chainLength({ ...sizing, cfNs: 2_500_000, cfMinNs: 2_500_000, fed: true });
  const loaded = p.chainLength({ ...sizing, cfNs: 6_000_000, cfMinNs: 2_500_000, fed: true });
  assert.equal(quiet, Math.floor(FED_RUN_NS / 2_500_000));
  assert.equal(loaded, quiet, 'the mean stretched by load does not shrink it');
  assert.equal(p.chainLength({ ...sizing, cfNs: 6_000_000, cfMinNs: 2_500_000 }), 1, 'a batch that is not fed: the mean');
  assert.equal(p.chainLength({ ...sizing, cfNs: 2_500_000, cfMinNs: Infinity, fed: true }), quiet, 'no fastest run yet: the mean');
  assert.equal(p.chainLength({ ...sizing, cfNs: 0, cfMinNs: Infinity, fed: true }), FIRST_BATCH);
  assert.equal(p.chainLength({ ...sizing, cfNs: 6_000_000, cfMinNs: 1, fed: true }), MAX_BATCH, 'capped');
});

test('a fed batch for a lane with under half of the first batch\'s work in flight holds that work; with more, or off, its full length', () => {
  const FED_FIRST_NS = 1_000_000;
  const p = new DefaultPolicy({ fedRunNs: FED_RUN_NS, fedFirstNs: FED_FIRST_NS });
  const cfNs = 45_000, fed = { ...sizing, cfNs, cfMinNs: cfNs, fed: true };
  const full = p.chainLength(fed), first = Math.ceil(FED_FIRST_NS / cfNs);
  assert.ok(first < full, `${first} against ${full}`);
  assert.equal(p.chainLength({ ...fed, aheadNs: 0 }), first, 'an idle lane: its first FED_FIRST_NS go at once');
  assert.equal(p.chainLength({ ...fed, aheadNs: FED_FIRST_NS / 2 - 1 }), first, 'one short step in flight');
  assert.ok(first * cfNs >= FED_FIRST_NS, 'the short batch holds at least FED_FIRST_NS');
  assert.equal(p.chainLength({ ...fed, aheadNs: FED_FIRST_NS / 2 }), full, 'half of it in flight: the full batch');
  assert.equal(p.chainLength({ ...fed, aheadNs: first * cfNs }), full, 'a short batch in flight does not cut the next');
  assert.equal(p.chainLength(fed), full, 'not asked for a lane');
  assert.equal(p.chainLength({ ...sizing, cfNs, aheadNs: 0 }), p.chainLength({ ...sizing, cfNs }), 'a batch that is not fed');
  assert.equal(p.chainLength({ ...fed, cfNs: 0, cfMinNs: Infinity, aheadNs: 0 }), FIRST_BATCH, 'cost unknown: a few, as before');
  assert.equal(p.chainLength({ ...fed, cfNs: 5_000_000, cfMinNs: 5_000_000, aheadNs: 0 }), 1, 'CFs longer than FED_FIRST_NS: one goes first');
  assert.equal(new DefaultPolicy({ fedRunNs: FED_RUN_NS, fedFirstNs: 0 }).chainLength({ ...fed, aheadNs: 0 }), full, 'off');
  const saved = process.env.LUNA_FED_FIRST_US;
  try {
    delete process.env.LUNA_FED_FIRST_US;
    assert.equal(new DefaultPolicy({ fedRunNs: FED_RUN_NS }).chainLength({ ...fed, aheadNs: 0 }), first, 'on by default, at 1 ms');
    process.env.LUNA_FED_FIRST_US = '0';
    assert.equal(new DefaultPolicy({ fedRunNs: FED_RUN_NS }).chainLength({ ...fed, aheadNs: 0 }), full, 'LUNA_FED_FIRST_US=0 turns it off');
    process.env.LUNA_FED_FIRST_US = '450';
    assert.equal(new DefaultPolicy({ fedRunNs: FED_RUN_NS }).chainLength({ ...fed, aheadNs: 0 }), 10, 'LUNA_FED_FIRST_US sets it');
  } finally {
    if (saved === undefined) delete process.env.LUNA_FED_FIRST_US; else process.env.LUNA_FED_FIRST_US = saved;
  }
});

test('while a lane holds a fed batch sent short every lane has one fed slot more; while none does, FEED_DEPTH, whatever the CF', () => {
  // the short batch must not fill its lane mid-pass; but a lane no batch was cut for (the block
  // matmul's: its short adds went into a third slot behind two batches of products) gets no more
  const p = new DefaultPolicy({ fedRunNs: FED_RUN_NS, fedFirstNs: 1_000_000 });
  const full2 = { count: 2, inflight: [FEED_DEPTH, FEED_DEPTH] };
  const view = (costNs: number, short?: number[]) => ({ costNs, fedFrom: new Int32Array(2), given: new Int32Array(2), follows: () => true, short });
  assert.equal(new DefaultPolicy({ fedFirstNs: 0 }).chooseFedLane(full2, [0, 1]), -1, 'off: FEED_DEPTH');
  for (const costNs of [0, 45_000, 100_000, 800_000]) {
    assert.equal(p.chooseFedLane(full2, [0, 1], view(costNs)), -1, `no short batch counted, ${costNs} ns: FEED_DEPTH`);
    assert.equal(p.chooseFedLane(full2, [0, 1], view(costNs, [0, 0])), -1, `no short batch in flight, ${costNs} ns: FEED_DEPTH`);
  }
  assert.ok(p.chooseFedLane(full2, [0, 1], view(45_000, [1, 1])) >= 0, 'both lanes hold a short batch: room for one more');
  assert.ok(p.chooseFedLane(full2, [0, 1], view(45_000, [1, 0])) >= 0, 'one lane holds one: the other lane too (the same depth for a step\'s CFs)');
  assert.equal(p.chooseFedLane(full2, [0], view(45_000, [1, 0])), 0, 'a chain on the lane holding one');
  assert.equal(p.chooseFedLane(full2, [1], view(45_000, [1, 0])), 1, 'a chain on the lane holding none');
  assert.equal(p.chooseFedLane({ count: 2, inflight: [FEED_DEPTH + 1, FEED_DEPTH + 1] }, [0, 1], view(45_000, [1, 1])), -1, 'one slot more, not two');
  assert.equal(p.chooseFedLane({ count: 2, inflight: [FEED_DEPTH + 1, 1] }, [0], view(45_000, [2, 0])), -1, 'two short batches: still one slot more');
});

test('a fed batch runs longer: about FED_RUN_NS of work, unless set otherwise or stealable on several nodes', () => {
  const cfNs = 2_500_000;
  const p = new DefaultPolicy({ fedRunNs: FED_RUN_NS });
  assert.equal(p.chainLength({ ...sizing, cfNs, fed: true }), Math.floor(FED_RUN_NS / cfNs));
  assert.ok(p.chainLength({ ...sizing, cfNs, fed: true }) > p.chainLength({ ...sizing, cfNs }), 'longer than a batch of ready CFs');
  assert.equal(p.chainLength({ ...sizing, cfNs: 0, fed: true }), FIRST_BATCH, 'a few until the cost is known');
  assert.equal(p.chainLength({ ...sizing, cfNs: 10, fed: true }), MAX_BATCH);
  assert.equal(p.chainLength({ ...sizing, cfNs, fed: true, nodes: 2, stealable: true }), 2);
  assert.equal(new DefaultPolicy({ fedRunNs: 5_000_000 }).chainLength({ ...sizing, cfNs, fed: true }), 2);
  const saved = process.env.LUNA_FED_RUN_MS;
  try {
    process.env.LUNA_FED_RUN_MS = '10';
    assert.equal(new DefaultPolicy().chainLength({ ...sizing, cfNs, fed: true }), 4, 'LUNA_FED_RUN_MS overrides it');
    process.env.LUNA_FED_RUN_MS = 'x';
    assert.equal(new DefaultPolicy().chainLength({ ...sizing, cfNs, fed: true }), Math.floor(FED_RUN_NS / cfNs), 'a malformed value is ignored');
  } finally {
    if (saved === undefined) delete process.env.LUNA_FED_RUN_MS; else process.env.LUNA_FED_RUN_MS = saved;
  }
});

test('a fed batch of long CFs holds enough work that the system thread\'s turn for it costs the lanes under 1 %', () => {
  const saved = process.env.LUNA_FED_RUN_MS;
  delete process.env.LUNA_FED_RUN_MS;
  try {
    const p = new DefaultPolicy();
    // 1–5 ms tasks (the stencil's 2.5 ms among them): the batch's work over the turn it costs
    for (const cfNs of [1_000_000, 2_500_000, 3_000_000, 5_000_000]) {
      const n = p.chainLength({ ...sizing, cfNs, cfMinNs: cfNs, fed: true });
      assert.ok(FED_TURN_NS / (n * cfNs) < 0.01, `${cfNs / 1e6} ms CFs: ${n} a batch, the turn ${((100 * FED_TURN_NS) / (n * cfNs)).toFixed(2)} % of its work`);
    }
    // a batch of ready CFs (BATCH_NS) of the same CFs would cost several times as much
    const plain = p.chainLength({ ...sizing, cfNs: 2_500_000 });
    assert.ok(FED_TURN_NS / (plain * 2_500_000) >= 0.02, 'the plain batch: one turn per few CFs');
  } finally {
    if (saved !== undefined) process.env.LUNA_FED_RUN_MS = saved;
  }
});

test('lane choice: the least loaded lane with room, else wait', () => {
  assert.equal(p.chooseLane({ count: 3, inflight: [1, 0, 1] }), 1);
  assert.equal(p.chooseLane({ count: 2, inflight: [2, 2] }), -1);
  assert.equal(p.chooseLane({ count: 2, inflight: [1, 1] }), 0);
});

test('fed lanes: the least loaded lane with room, ties taken in turn so the CFs of a step spread, else wait', () => {
  const p = new DefaultPolicy();
  assert.equal(p.chooseFedLane({ count: 3, inflight: [1, 0, 1] }, [0, 2]), 1);
  assert.equal(p.chooseFedLane({ count: 2, inflight: [FEED_DEPTH, FEED_DEPTH] }, [0, 1]), -1);
  // equal loads: lanes in turn (two CFs of one step must not queue on one worker)
  const q = new DefaultPolicy();
  const picks = [0, 1, 2, 3].map(() => q.chooseFedLane({ count: 2, inflight: [0, 0] }, [0, 1]));
  assert.deepEqual(picks, [0, 1, 0, 1]);
  // a producer's lane full: it waits for that lane's batch (the lanes run in step, and feeding the
  // one with room at once locked a stencil into one short batch per lane per return)
  assert.equal(q.chooseFedLane({ count: 2, inflight: [FEED_DEPTH, 0] }, [0, 1]), -1);
  assert.equal(new DefaultPolicy().chooseFedLane({ count: 3, inflight: [FEED_DEPTH, 0, 0] }, [1, 2]), 1, 'a full lane it is not fed from does not hold it');
  // fed from one lane (a chain): that lane, or wait for it
  assert.equal(q.chooseFedLane({ count: 2, inflight: [1, 0] }, [0]), 0);
  assert.equal(q.chooseFedLane({ count: 2, inflight: [FEED_DEPTH, 0] }, [0]), -1);
});

test('fed lanes: a long CF fed from a lane that already feeds another in the pass is parallel work and goes elsewhere; a chain stays', () => {
  const p = new DefaultPolicy();
  const view = (costNs: number, fedFrom: number[], given: number[], follows = [0, 0]) => ({ costNs, fedFrom, given, follows: (lane: number) => follows[lane] === 1 });
  // the second CF of a stencil step, both fed from lane 0 alone
  assert.equal(p.chooseFedLane({ count: 2, inflight: [1, 0] }, [0], view(FEED_SPREAD_NS, [1, 0], [1, 0])), 1);
  // short: a hand-off between workers would cost more than queueing behind the first
  assert.equal(p.chooseFedLane({ count: 2, inflight: [1, 0] }, [0], view(FEED_SPREAD_NS - 1, [1, 0], [1, 0])), 0);
  // the first CF fed from lane 0 in this pass continues its chain there, however long
  assert.equal(p.chooseFedLane({ count: 2, inflight: [1, 0] }, [0], view(10 * FEED_SPREAD_NS, [0, 0], [0, 0])), 0);
  // fed from several lanes: CFs given earlier in the pass count as load
  assert.equal(p.chooseFedLane({ count: 2, inflight: [0, 0] }, [0, 1], view(0, [1, 1], [1, 0])), 1);
  assert.equal(p.chooseFedLane({ count: 2, inflight: [0, 1] }, [0, 1], view(0, [1, 1], [2, 0])), 1);
  // a long CF does not queue behind a CF of this pass it does not follow (the other CF of its
  // stencil step, given to the only lane with room): it waits for room elsewhere
  assert.equal(p.chooseFedLane({ count: 3, inflight: [FEED_DEPTH, 1, 1] }, [1, 2], view(FEED_SPREAD_NS, [1, 1, 1], [0, 1, 0])), 2, 'the lane that got none');
  assert.equal(p.chooseFedLane({ count: 3, inflight: [FEED_DEPTH, 1, FEED_DEPTH] }, [1, 2], view(FEED_SPREAD_NS, [1, 1, 1], [0, 1, 0])), -1);
  assert.equal(p.chooseFedLane({ count: 3, inflight: [1, 1, FEED_DEPTH] }, [0, 1], view(FEED_SPREAD_NS, [1, 1, 0], [1, 1, 0], [0, 1, 0])), 1, 'it follows that CF: a chain');
  assert.ok([0, 1].includes(p.chooseFedLane({ count: 3, inflight: [1, 1, FEED_DEPTH] }, [0, 1], view(FEED_SPREAD_NS - 1, [1, 1, 0], [1, 1, 0]))), 'short: it queues');
  assert.equal(new DefaultPolicy().chooseFedLane({ count: 2, inflight: [1, 1] }, [0, 1], view(FEED_SPREAD_NS, [2, 2], [1, 1])), 0, 'every lane got parallel work already: more of it queues');
  // a code not measured yet may be long: the second of its CFs fed from one lane goes elsewhere
  assert.equal(new DefaultPolicy().chooseFedLane({ count: 2, inflight: [1, 0] }, [0], view(0, [1, 0], [1, 0])), 1, 'unmeasured: spread like a long one');
  assert.equal(new DefaultPolicy().chooseFedLane({ count: 2, inflight: [1, 0] }, [0], view(0, [0, 0], [0, 0])), 0, 'unmeasured, the first from that lane: its chain');
});

test('inline: codes measured enough times and tiny on average; at start-up, the first two calls and codes once fast (on one node up to 10 ms); never when disabled', () => {
  const up = { workersReady: true, nodes: 1, alone: false, handoffNs: 0, aloneSinceHandoff: 0 }, booting = { workersReady: false, nodes: 1, alone: false, handoffNs: 0, aloneSinceHandoff: 0 };
  const cost = (meanNs: number, samples: number, minNs = meanNs) => ({ meanNs, samples, minNs, lastNs: 0, recentNs: 0 });
  assert.equal(p.runInline(cost(100, INLINE_SAMPLES - 1), up), false, 'measured enough first');
  assert.equal(p.runInline(cost(100, INLINE_SAMPLES), up), true);
  assert.equal(p.runInline(cost(INLINE_NS * 2, 100), up), false);
  assert.equal(p.runInline(cost(0, 0), booting), true, 'no worker to wait for yet: measure it here');
  assert.equal(p.runInline(cost(0, 0), { workersReady: false, nodes: 2, alone: false, handoffNs: 0, aloneSinceHandoff: 0 }), false, 'an unknown code on several nodes could silence the node: wait');
  assert.equal(p.runInline(cost(300_000, INLINE_SAMPLES, 1000), booting), true, 'a cold first call was slow, the fastest was tiny');
  assert.equal(p.runInline(cost(500_000, 1), booting), true, 'a short first call keeps the code here while workers boot');
  assert.equal(p.runInline(cost(BOOT_INLINE_NS * 20, 1), booting), true, 'one slow call may be the cold one (compilation): a second call decides');
  assert.equal(p.runInline(cost(BOOT_INLINE_NS * 2, 2), booting), true, 'one node: a CF of 2 ms runs here rather than wait tens of ms for a worker');
  assert.equal(p.runInline(cost(BOOT_INLINE_NS * 2, 2), { ...booting, nodes: 2 }), false, 'several nodes: known to be long after two calls, wait for a worker');
  assert.equal(p.runInline(cost(BOOT_INLINE_ONE_NODE_NS, 2), booting), false, 'one node: a code as long as a worker\'s boot waits for it');
  assert.equal(p.runInline(cost(BOOT_INLINE_NS * 20, 1), { workersReady: false, nodes: 2, alone: false, handoffNs: 0, aloneSinceHandoff: 0 }), false, 'on several nodes one long call is enough');
  assert.equal(p.runInline(cost(1_000_000, INLINE_SAMPLES, 1_000_000), { workersReady: false, nodes: 2, alone: false, handoffNs: 0, aloneSinceHandoff: 0 }), false);
  assert.equal(new DefaultPolicy({ inline: false }).runInline(cost(100, 100), up), false);
  // a CF marked heavy runs on a worker, its code's first call before any worker is up too; the
  // same CF unmarked runs here
  const cfAt = (heavy: boolean) => ({ id: 1, gid: 'mk[0]', site: { kind: 'call', heavy }, memo: () => undefined }) as unknown as Parameters<DefaultPolicy['runInline']>[2];
  assert.equal(p.runInline(cost(0, 0), booting, cfAt(false)), true, 'unmarked: measured here');
  assert.equal(p.runInline(cost(0, 0), booting, cfAt(true)), false, 'heavy: never here, not even its first call');
  assert.equal(p.runInline(cost(100, INLINE_SAMPLES), up, cfAt(true)), false, 'heavy: not even if its calls were tiny');
  // a lone CF: a worker would add its hand-off to it and there is nothing else to do meanwhile
  const alone = (handoffNs: number) => ({ ...up, nodes: 2, alone: true, handoffNs });
  assert.equal(p.runInline(cost(100_000, INLINE_SAMPLES), alone(300_000)), true, 'shorter than the hand-off: here');
  assert.equal(p.runInline(cost(100_000, INLINE_SAMPLES), { ...alone(300_000), alone: false }), false, 'not alone: the workers take it');
  assert.equal(p.runInline(cost(400_000, INLINE_SAMPLES), alone(300_000)), false, 'longer than the hand-off: a worker');
  assert.equal(p.runInline(cost(100_000, INLINE_SAMPLES), alone(0)), false, 'hand-off not measured yet');
  assert.equal(p.runInline(cost(100_000, INLINE_SAMPLES - 1), alone(300_000)), false, 'measured enough first');
  assert.equal(p.runInline(cost(ALONE_INLINE_NS * 1.5, INLINE_SAMPLES), alone(ALONE_INLINE_NS * 4)), false, 'never longer than the bound, however slow the hand-off');
  // the hand-off is measured only on workers: after HANDOFF_PROBE lone CFs here, one goes there
  assert.equal(p.runInline(cost(100_000, INLINE_SAMPLES), { ...alone(300_000), aloneSinceHandoff: HANDOFF_PROBE - 1 }), true, 'not yet');
  assert.equal(p.runInline(cost(100_000, INLINE_SAMPLES), { ...alone(300_000), aloneSinceHandoff: HANDOFF_PROBE }), false, 'to a worker, to measure the hand-off again');
  assert.equal(p.runInline(cost(INLINE_NS / 2, INLINE_SAMPLES), { ...alone(300_000), aloneSinceHandoff: HANDOFF_PROBE }), true, 'a tiny code stays here anyway');
  // the last three calls (their shortest) instead of the mean, once they jumped
  const recent = (meanNs: number, recentNs: number) => ({ ...cost(meanNs, 100), recentNs });
  assert.equal(p.runInline(recent(1000, 2_000_000), up), false, 'three long calls in a row: the code became long, the mean lags');
  assert.equal(p.runInline(recent(1000, 1999), up), true, 'recent calls not twice the mean: the mean decides');
  assert.equal(p.runInline(recent(INLINE_NS * 0.75, INLINE_NS * 1.25), up), true, 'a code near the limit that jitters keeps its place');
  assert.equal(p.runInline(recent(1000, 2_000_000), alone(ALONE_INLINE_NS * 4)), false, 'nor alone: longer than the bound');
});

test('spreading loops: long loops on several nodes, unless turned off', () => {
  assert.equal(p.spreadLoop(1_000_000, 1), false, 'one node: nowhere to spread');
  assert.equal(p.spreadLoop(SPREAD_MIN_ITERATIONS, 2), true);
  assert.equal(p.spreadLoop(SPREAD_MIN_ITERATIONS - 1, 2), false, 'a short loop migrates its few CFs');
  assert.equal(p.spreadLoop(SPREAD_MIN_ITERATIONS * 2, 4), false, 'a copy per node must pay for itself');
  assert.equal(p.spreadLoop(SPREAD_MIN_ITERATIONS * 3, 4), true);
  assert.equal(new DefaultPolicy({ spreadLoops: false }).spreadLoop(1_000_000, 2), false);
  const replay = new PlaybackPolicy({ program: 'p.fa', args: [], nodes: 2, threads: 1, order: [[], []] }, 0, new DefaultPolicy());
  assert.equal(replay.spreadLoop(1_000_000, 2), true, 'a replay places by global id, asked where a spread loop decides what to spawn');
});

test('unrolling: a chunk while few CFs live, none beyond the target unless the node would starve', () => {
  // workers busy (batches in flight): full chunks, as far as the live target allows
  const busy = { remaining: 1e6, live: 0, waiting: 0, starving: false, nodes: 1, ordered: false, inflight: 1, lastChunk: 0, wokenSince: 0, calm: Infinity };
  assert.equal(p.unrollChunk({ ...busy, remaining: 10 }), 10);
  assert.equal(p.unrollChunk(busy), WAIT_AHEAD, 'nothing ready or running: no more at once than may wait');
  // CFs that only wait (a chain) are spawned ahead up to WAIT_AHEAD, plus 4 per CF ready or running
  assert.equal(p.unrollChunk({ ...busy, live: 130, waiting: 128 }), 8);
  assert.equal(p.unrollChunk({ ...busy, live: 140, waiting: 140 }), 0);
  assert.equal(p.unrollChunk({ ...busy, live: 140, waiting: 140, starving: true }), LOOP_CHUNK);
  // another loop used the node's bound up: a loop whose lanes reached its newest CFs gets a chunk all the same
  assert.equal(p.unrollChunk({ ...busy, live: 140, waiting: 140, behind: true }), WAIT_AHEAD);
  assert.equal(p.unrollChunk({ ...busy, live: LIVE_TARGET, waiting: 140, behind: true }), 0, 'not beyond the live target');
  assert.equal(p.unrollChunk({ ...busy, live: 700, waiting: 300, inflight: 4 }), LOOP_CHUNK, 'much work ready or running: full chunks');
  // the factor per CF ready or running is the policy's option: 1 keeps fewer waiting ahead
  const one = new DefaultPolicy({ waitAheadPerCf: 1 });
  assert.equal(one.unrollChunk({ ...busy, live: 400, waiting: 200 }), WAIT_AHEAD + 200 - 200);
  assert.equal(one.unrollChunk({ ...busy, live: 400, waiting: 300 }), 0);
  assert.equal(p.unrollChunk({ ...busy, live: 400, waiting: 300 }), WAIT_AHEAD + 4 * 100 - 300, 'the default, 4');
  // however many CFs are ready or running, no more than a full batch per batch in flight waits ahead
  // (fed batches of ~400 CFs on 2 lanes, 4 in flight: the bound per CF alone let 6 400 wait)
  const running = { ...busy, inflight: 4 };
  assert.equal(p.unrollChunk({ ...running, live: 1600 + 1000, waiting: 1000 }), LOOP_CHUNK, 'below the cap: full chunks');
  assert.equal(p.unrollChunk({ ...running, live: 1600 + 1500, waiting: 1500 }), WAIT_AHEAD + 4 * MAX_BATCH - 1500);
  assert.equal(p.unrollChunk({ ...running, live: 1600 + 2500, waiting: WAIT_AHEAD + 4 * MAX_BATCH }), 0);
  assert.equal(p.unrollChunk({ ...running, live: 1600 + 2500, waiting: WAIT_AHEAD + 4 * MAX_BATCH, behind: true }), WAIT_AHEAD, 'a loop its lanes reached still gets a chunk');
  assert.equal(p.unrollChunk({ ...running, live: 130, waiting: 128 }), 8, 'the cap does not lift the bound per CF');
  const uncapped = new DefaultPolicy({ waitAheadPerBatch: Infinity });
  assert.equal(uncapped.unrollChunk({ ...running, live: 1600 + 2500, waiting: WAIT_AHEAD + 4 * MAX_BATCH }), LOOP_CHUNK, 'uncapped: 4 per CF in flight');
  // a fractional factor still spawns whole iterations (a fraction made a loop's counter fractional)
  const quarter = new DefaultPolicy({ waitAheadPerCf: 0.25 });
  assert.equal(quarter.unrollChunk({ ...busy, live: 101, waiting: 100 }), WAIT_AHEAD - 100);
  assert.equal(quarter.unrollChunk({ ...busy, live: 103, waiting: 100 }), WAIT_AHEAD - 100);
  assert.equal(quarter.unrollChunk({ ...busy, live: 146, waiting: 100 }), WAIT_AHEAD - 100 + 11);
  assert.equal(p.unrollChunk({ ...busy, live: LIVE_TARGET }), 0);
  assert.equal(p.unrollChunk({ ...busy, live: LIVE_TARGET, starving: true }), LOOP_CHUNK);
  // several nodes: CFs spawned early request their remote inputs early, so full chunks
  assert.equal(p.unrollChunk({ ...busy, inflight: 0, nodes: 2, lastChunk: 1, wokenSince: 5 }), LOOP_CHUNK);
  // priorities order what is spawned: full chunks give the order its candidates
  assert.equal(p.unrollChunk({ ...busy, inflight: 0, ordered: true, lastChunk: 1, wokenSince: 5 }), LOOP_CHUNK);
});

test('unrolling while the node runs everything itself: no further ahead than the CFs are ready', () => {
  const here = { remaining: 1e6, live: 10, waiting: 0, starving: true, nodes: 1, ordered: false, inflight: 0, lastChunk: 0, wokenSince: 0, calm: Infinity };
  assert.equal(p.unrollChunk(here), 1, 'the first chunk is one iteration');
  assert.equal(p.unrollChunk({ ...here, lastChunk: 8 }), 16, 'every spawned CF was ready: double');
  assert.equal(p.unrollChunk({ ...here, lastChunk: 8, wokenSince: 3 }), 4, 'some were spawned before their inputs: halve');
  assert.equal(p.unrollChunk({ ...here, lastChunk: 1, wokenSince: 3 }), 1, 'never below one iteration');
  // a loop that was woken steps up again only after CALM_UNROLLS calm unrolls (a dependent chain
  // stays at one step instead of alternating 1, 2, 1, 2 and parking every other CF)
  assert.equal(p.unrollChunk({ ...here, lastChunk: 1, calm: 0 }), 1, 'just woken: keep the chunk');
  assert.equal(p.unrollChunk({ ...here, lastChunk: 4, calm: CALM_UNROLLS - 1 }), 4, 'not calm long enough: keep it');
  assert.equal(p.unrollChunk({ ...here, lastChunk: 4, calm: CALM_UNROLLS }), 8, 'calm long enough: double');
  assert.equal(p.unrollChunk({ ...here, lastChunk: ALONE_CHUNK }), ALONE_CHUNK, 'never above a chunk for this thread alone');
  assert.ok(ALONE_CHUNK < LOOP_CHUNK);
  assert.equal(p.unrollChunk({ ...here, lastChunk: 64, remaining: 5 }), 5, 'never beyond the loop');
  assert.equal(p.unrollChunk({ ...here, live: LIVE_TARGET, starving: false, lastChunk: 8 }), 0, 'the live target still bounds it');
});

test('stealing: victims in turn, never oneself; half of what exceeds the lanes is given', () => {
  const victims = [0, 1, 2, 3].map((a) => p.stealVictim(1, 4, a));
  assert.deepEqual(victims, [2, 3, 0, 2]);
  assert.equal(p.stealVictim(0, 2, 5), 1);
  assert.equal(p.giveAway(2, 2), 0);
  assert.equal(p.giveAway(10, 2), 4);
  assert.equal(p.giveAway(3, 2), 1);
});

test('workers boot once a code is seen not to be tiny, at once on several nodes', () => {
  const cost = (minNs: number, samples: number, meanNs = minNs, lastNs = 0) => ({ meanNs, samples, minNs, lastNs, recentNs: 0 });
  assert.equal(p.bootWorkers(cost(Infinity, 0), 0, 1), false, 'one node: not before a CF ran');
  assert.equal(p.bootWorkers(cost(Infinity, 0), 0, 2), true, 'several nodes: a code\'s first CF goes to a worker');
  assert.equal(p.bootWorkers(cost(Infinity, 0), 0, 1, true), true, 'one node, a CF marked heavy: at the start');
  assert.equal(p.bootWorkers(cost(500, 1), 500, 1, false), false, 'unmarked, tiny: not');
  assert.equal(p.bootAtOnce(2, 2, true), 2, 'a CF marked heavy: every lane\'s worker boots at once');
  assert.equal(p.bootAtOnce(2, 8, true), 2, 'marked, more lanes than cores: one a core at once');
  assert.equal(p.bootAtOnce(2, 2, false), 1, 'unmarked: one fewer than the cores, this thread keeps one');
  assert.equal(p.bootAtOnce(8, 2), 2, 'no more than the lanes');
  assert.equal(p.bootAtOnce(1, 4), 1, 'at least one');
  assert.equal(p.bootWorkers(cost(500, 1), 500, 1), false, 'tiny');
  assert.equal(p.bootWorkers(cost(INLINE_NS, 1), INLINE_NS, 1), false, 'one call may be a cold one');
  assert.equal(p.bootWorkers(cost(INLINE_NS, 2), INLINE_NS, 1), false, 'the first calls of a code run cold');
  const calls = Math.ceil(BOOT_INLINE_NS / INLINE_NS);
  assert.equal(p.bootWorkers(cost(INLINE_NS, calls - 1), INLINE_NS, 1), false, 'not tiny, but not yet a millisecond of it');
  assert.equal(p.bootWorkers(cost(INLINE_NS, calls), INLINE_NS, 1), true, 'not tiny at its fastest for a millisecond: it will go to workers');
  assert.equal(p.bootWorkers(cost(5 * INLINE_NS, Math.ceil(calls / 5)), 5 * INLINE_NS, 1), true, 'a longer code boots them sooner');
  assert.equal(p.bootWorkers(cost(INLINE_NS - 1, 5), INLINE_NS * 10, 1), false, 'a slow call of a code that once ran tiny');
  assert.equal(p.bootWorkers(cost(INLINE_NS / 10, 300, INLINE_NS / 8), 2 * BOOT_INLINE_NS, 1), false, 'a lone call of 2 ms of a tiny code (a collection, a preemption)');
  assert.equal(p.bootWorkers(cost(INLINE_NS / 10, 300, INLINE_NS, BOOT_INLINE_NS), BOOT_INLINE_NS, 1), true, 'a code whose calls became long');
  assert.equal(p.bootWorkers(cost(INLINE_NS / 10, 300, INLINE_NS, INLINE_NS / 10), BOOT_INLINE_NS, 1), false, 'one long call is an outlier, two in a row are a change');
  assert.equal(p.bootWorkers({ ...cost(INLINE_NS / 10, 300, INLINE_NS / 8, 2 * BOOT_INLINE_NS), recentNs: 2 * BOOT_INLINE_NS }, 2 * BOOT_INLINE_NS, 1), true, 'three long calls in a row: the mean need not have reached INLINE_NS');
  // a cold first call of 5 ms keeps the damped mean above INLINE_NS for the calls after it
  assert.equal(p.bootWorkers(cost(INLINE_NS / 2, 3, 1_250_000, INLINE_NS / 2), BOOT_INLINE_NS, 1), false, 'a tiny code\'s third call descheduled after a slow first');
  assert.equal(p.bootWorkers(cost(INLINE_NS / 2, 2, 2_500_000, 5 * BOOT_INLINE_NS), BOOT_INLINE_NS, 1), false, 'the second call long after a long cold first: not yet');
  assert.equal(p.bootWorkers(cost(BOOT_INLINE_NS, 1), BOOT_INLINE_NS, 1), false, 'a first call includes compiling the code');
  assert.equal(p.bootWorkers(cost(BOOT_FIRST_CALL_NS - 1, 1), BOOT_FIRST_CALL_NS - 1, 1), false, 'a first call shorter than a worker\'s boot');
  assert.equal(p.bootWorkers(cost(BOOT_FIRST_CALL_NS, 1), BOOT_FIRST_CALL_NS, 1), true, 'a first call as long as a worker\'s boot: work for them');
  assert.equal(p.bootWorkers(cost(BOOT_INLINE_NS, 2, BOOT_FIRST_CALL_NS, BOOT_FIRST_CALL_NS), BOOT_INLINE_NS, 1), false, 'only the first call itself decides so');
  assert.equal(p.bootWorkers(cost(BOOT_INLINE_NS, 2), BOOT_INLINE_NS, 1), false, 'one warm call may have been descheduled');
  assert.equal(p.bootWorkers(cost(BOOT_INLINE_NS, 3), BOOT_INLINE_NS, 1), true, 'two warm calls long enough');
  assert.equal(p.bootWorkers(cost(726_000, 2, 3_300_000, 5_900_000), 726_000, 1), false, 'a cold first call and one descheduled second (measured)');
  assert.equal(p.bootWorkers(cost(INLINE_NS / 10, 2, BOOT_INLINE_NS), INLINE_NS / 10, 1), false, 'a slow first call and a tiny second');
});

test('queued messages leave before a long inline ucode, not before a short one', () => {
  assert.equal(p.flushBefore(FLUSH_BEFORE_NS), true);
  assert.equal(p.flushBefore(FLUSH_BEFORE_NS - 1), false);
});

test('waiting: spins where a second CPU may be free, never on one; the system thread spins for results on one node only; lanes pinned where there are CPUs for them', () => {
  assert.deepEqual(p.waiting({ cpus: 1, lanes: 2, nodes: 1 }), { cpus: 1, idleSpinNs: 0, fedSpinNs: 0, resultSpinNs: 0 }, 'one CPU: the awaited thread needs it');
  assert.deepEqual(p.waiting({ cpus: 2, lanes: 2, nodes: 1 }), { cpus: 2, idleSpinNs: IDLE_SPIN_NS, fedSpinNs: FED_SPIN_NS, fedSpinProducerNs: FED_SPIN_PRODUCER_NS, fedStarvedNs: FED_STARVED_NS, resultSpinNs: RESULT_SPIN_NS, laneSleepNs: LANE_SLEEP_NS, pinLanes: PIN_LANES, runLowNs: RUN_LOW_NS });
  const many = p.waiting({ cpus: 8, lanes: 4, nodes: 2 });
  assert.equal(many.resultSpinNs, 0, 'several nodes: network input must not wait behind a spin');
  assert.equal(many.laneSleepNs, 0, 'several nodes: the system thread does not sleep on a lane');
  assert.equal(many.fedSpinNs, FED_SPIN_NS);
  assert.equal(many.pinLanes, PIN_LANES, 'pinned or not by the policy; the pool pins only where the node has a CPU for each lane');
  assert.equal(many.runLowNs, RUN_LOW_NS, 'the same ask for a next batch on any number of nodes');
  assert.ok(IDLE_SPIN_NS > 0 && FED_SPIN_NS > 0 && RESULT_SPIN_NS > 0);
});

test('the system thread is one of the lanes only when LUNA_SYSTEM_LANE=1 asks, and only with several lanes', () => {
  const saved = process.env.LUNA_SYSTEM_LANE;
  try {
    delete process.env.LUNA_SYSTEM_LANE;
    assert.equal(p.systemLane({ cpus: 2, lanes: 2, nodes: 1 }), false, 'not the default yet');
    assert.equal(p.systemLane({ cpus: 8, lanes: 4, nodes: 2 }), false);
    process.env.LUNA_SYSTEM_LANE = '0';
    assert.equal(p.systemLane({ cpus: 2, lanes: 2, nodes: 1 }), false);
    process.env.LUNA_SYSTEM_LANE = '1';
    assert.equal(p.systemLane({ cpus: 2, lanes: 2, nodes: 1 }), true);
    assert.equal(p.systemLane({ cpus: 8, lanes: 4, nodes: 2 }), true);
    assert.equal(p.systemLane({ cpus: 2, lanes: 1, nodes: 1 }), false, 'one lane: the worker keeps the FIFO order');
  } finally {
    if (saved === undefined) delete process.env.LUNA_SYSTEM_LANE; else process.env.LUNA_SYSTEM_LANE = saved;
  }
});

test('a forwarding policy forwards every question the default policy answers, so a wrapper changes only what it overrides', () => {
  // every method: one the default answers and the wrapper lacked went to undefined (the runtime's
  // own fallback) under priorities, a distribution or a recorder: --warm-start rehearsed nothing
  const asked = Object.getOwnPropertyNames(DefaultPolicy.prototype).filter((m) => m !== 'constructor');
  const forwarded = new Set(Object.getOwnPropertyNames(ForwardingPolicy.prototype));
  assert.deepEqual(asked.filter((m) => !forwarded.has(m)), [], 'questions the forwarding policy does not pass on');
  const inner = new DefaultPolicy({ fedRunNs: FED_RUN_NS, fedFirstNs: 1_000_000 });
  const outer = new PriorityPolicy(inner);
  const threads = { cpus: 2, lanes: 2, nodes: 1 };
  assert.deepEqual(outer.rehearsal(threads), inner.rehearsal(threads));
  assert.notEqual(outer.rehearsal(threads), undefined);
  const fed = { ...sizing, cfNs: 40_000, cfMinNs: 40_000, fed: true };
  assert.equal(outer.planWindow(fed, 3), inner.planWindow(fed, 3));
  assert.equal(outer.planWindows, inner.planWindows);
  for (const k of ['fifoDepth', 'fifoStartParked', 'fedBatchBytes'] as const) assert.equal(new ForwardingPolicy(inner)[k], inner[k], k);
});
