// The node runtime in process (test/runtime/harness.ts): the mechanism and its policy seams,
// without worker threads or processes. Each test runs in milliseconds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runInProcess } from './harness.js';
import { spin } from '../../examples/kernels.js';
import type { DF } from '../../src/ucode/df.js';
import { DefaultPolicy } from '../../src/runtime/policy/default.js';
import { PriorityPolicy } from '../../src/runtime/policy/priority.js';
import { PlaybackPolicy, type Schedule } from '../../src/runtime/policy/playback.js';
import { RecordingPolicy } from '../../src/runtime/policy/record.js';
import { ForwardingPolicy } from '../../src/runtime/policy/forward.js';
import type { LanesView, BatchSizing, SchedulingPolicy } from '../../src/runtime/policy/types.js';

function logger(): { log: string[]; say: (s: string) => void; set: (tag: string, v: number, x: DF) => void; show: (tag: string, x: DF) => void } {
  const log: string[] = [];
  return {
    log,
    say: (s) => { log.push(s); },
    set: (tag, v, x) => { log.push(tag); x.setInt(v); },
    show: (tag, x) => { log.push(`${tag} ${x.getInt()}`); },
  };
}

const FIFO = `
import c_say(string) as say;
import c_set(string, int, name) as set;
import c_show(string, value) as show;
sub two(string p) { cf s1: say(p + ".1"); cf s2: say(p + ".2"); }
sub main() {
  df x, flag;
  cf a: say("A");
  two("S");
  for i = 1..2 cf l[i]: say("F" + i);
  cf w: show("W x", x);
  cf p: set("P sets x", 5, x);
  cf b: say("B");
  cf g: say("G") >> (flag);
  cf h: show("H flag", flag);
  two("T");
}`;

test('one lane: the original FIFO order (children after their parent, a waiting CF at the back)', async () => {
  const u = logger();
  const r = await runInProcess(FIFO, { c_say: u.say, c_set: u.set, c_show: u.show }, { lanes: 1 });
  assert.equal(r.ok, true, r.message);
  assert.deepEqual(u.log, ['A', 'P sets x', 'B', 'G', 'H flag 1', 'S.1', 'S.2', 'F1', 'F2', 'W x 5', 'T.1', 'T.2']);
});

test('one lane, inline execution of tiny codes on the system thread: the same FIFO order', async () => {
  const u = logger();
  const r = await runInProcess(FIFO, { c_say: u.say, c_set: u.set, c_show: u.show }, { lanes: 1, inline: true });
  assert.equal(r.ok, true, r.message);
  assert.deepEqual(u.log, ['A', 'P sets x', 'B', 'G', 'H flag 1', 'S.1', 'S.2', 'F1', 'F2', 'W x 5', 'T.1', 'T.2']);
});

const LOOP = `
import c_step(value, name) as step;
import c_first(name) as first;
import c_last(int, value) as last;
import c_tick(int) as tick;
sub main(int n) {
  df x;
  cf f: first(x[0]) @ { req_count x[0] = 1; };
  for i = 0..n-1 cf link[i]: step(x[i], x[i + 1]) @ { req_count x[i + 1] = 1; };
  cf z: last(n, x[n]);
  for j = 0..2 cf t[j]: tick(j);
}`;

test('one lane keeps a second batch queued behind the running one; the FIFO order is that of one at a time', async () => {
  class OneAtATime extends DefaultPolicy { override readonly fifoDepth = 1; }
  const run = async (policy: SchedulingPolicy, inline: boolean) => {
    const u = logger();
    const r = await runInProcess(FIFO, { c_say: u.say, c_set: u.set, c_show: u.show }, { lanes: 1, policy, inline });
    assert.equal(r.ok, true, r.message);
    return { log: u.log, depth: r.lanes.maxInflight };
  };
  for (const inline of [false, true]) {
    const one = await run(new OneAtATime(), inline), two = await run(new DefaultPolicy(), inline);
    assert.equal(one.depth, 1);
    assert.deepEqual(two.log, one.log, `inline ${inline}`);
    assert.deepEqual(two.log, ['A', 'P sets x', 'B', 'G', 'H flag 1', 'S.1', 'S.2', 'F1', 'F2', 'W x 5', 'T.1', 'T.2']);
  }
  // a chain and independent CFs: the second batch is built while the first runs, fed from it
  const order: string[] = [];
  const ucodes = {
    c_first: (x: DF) => x.setInt(0), c_step: (a: DF, b: DF) => b.setInt(a.getInt() + 1),
    c_last: (n: number, x: DF) => { order.push(`last ${x.getInt()} of ${n}`); }, c_tick: (j: number) => { order.push(`tick ${j}`); },
  };
  const r = await runInProcess(LOOP, ucodes, { lanes: 1, args: ['3000'] });
  assert.equal(r.ok, true, r.message);
  assert.equal(r.lanes.maxInflight, 2);
  assert.deepEqual(order, ['tick 0', 'tick 1', 'tick 2', 'last 3000 of 3000']);
});

test('a long loop with one lane unrolls a chunk at a time in FIFO order: bounded live CFs, same order', async () => {
  let maxLive = 0;
  let live = (): number => 0;
  const order: string[] = [];
  const ucodes = {
    c_first: (x: DF) => x.setInt(0),
    c_step: (a: DF, b: DF) => { maxLive = Math.max(maxLive, live()); b.setInt(a.getInt() + 1); },
    c_last: (n: number, x: DF) => { order.push(`last ${x.getInt()} of ${n}`); },
    c_tick: (j: number) => { order.push(`tick ${j}`); },
  };
  const n = 20_000;
  const r = await runInProcess(LOOP, ucodes, { lanes: 1, args: [String(n)], observe: (rt) => { live = () => rt.live; } });
  assert.equal(r.ok, true, r.message);
  // FIFO as the original: z waits for x[n] and is queued at the back when the last link posts
  // it — behind the ticks, which were queued (by the second loop) before the links ran
  assert.deepEqual(order, ['tick 0', 'tick 1', 'tick 2', `last ${n} of ${n}`]);
  assert.ok(maxLive < 3000, `at most a couple of chunks alive, saw ${maxLive} live CFs of ${n}`);
});

test('several lanes: ready CFs are spread over the lanes in batches; the result is the same', async () => {
  const seen: number[] = [];
  const src = `
import c_work(int) as work;
sub main(int n) { for i = 0..n-1 cf w[i]: work(i); }`;
  const r = await runInProcess(src, { c_work: (i: number) => { seen.push(i); } }, { lanes: 3, args: ['300'] });
  assert.equal(r.ok, true, r.message);
  assert.deepEqual([...seen].sort((a, b) => a - b), Array.from({ length: 300 }, (_, i) => i));
  const used = new Set(r.lanes.sent.map((b) => b.lane));
  assert.equal(used.size, 3, 'every lane got work');
});

test('policy seam: lane choice and batch size come from the policy', async () => {
  class OneLaneOneByOne extends DefaultPolicy {
    override readonly name = 'test';
    override chooseLane(l: LanesView): number { return l.inflight[2]! < 1 ? 2 : -1; }
    override batchSize(_s: BatchSizing): number { return 1; }
  }
  const src = `
import c_work(int) as work;
sub main() { for i = 0..9 cf w[i]: work(i); }`;
  const r = await runInProcess(src, { c_work: () => {} }, { lanes: 3, policy: new OneLaneOneByOne() });
  assert.equal(r.ok, true, r.message);
  assert.ok(r.lanes.sent.length >= 10);
  for (const b of r.lanes.sent) { assert.equal(b.lane, 2); assert.equal(b.cfs.length, 1); }
});

test('a chain forms continuations: its CFs travel in few batches on one lane', async () => {
  const r = await runInProcess(LOOP, {
    c_first: (x: DF) => x.setInt(0), c_step: (a: DF, b: DF) => b.setInt(a.getInt() + 1), c_last: () => {}, c_tick: () => {},
  }, { lanes: 2, args: ['400'] });
  assert.equal(r.ok, true, r.message);
  const links = r.lanes.sent.reduce((a, b) => a + b.cfs.length, 0);
  assert.ok(links >= 400);
  assert.ok(r.lanes.sent.length < 100, `${r.lanes.sent.length} batches for 400 chained CFs`);
});

test('priorities: a `priority` rule runs the critical chain before fillers queued ahead of it', async () => {
  const src = `
import c_fill(int) as fill;
import c_step(value, name) as step;
import c_first(name) as first;
sub chain() {
  df x;
  cf f: first(x[0]) @ { priority: 100; };
  for i = 0..4 cf link[i]: step(x[i], x[i + 1]) @ { priority: 100; };
}
sub main(int n) {
  for i = 0..n-1 cf filler[i]: fill(i);
  chain();
}`;
  const order: string[] = [];
  const ucodes = { c_fill: (i: number) => { order.push(`fill ${i}`); }, c_first: (x: DF) => { order.push('first'); x.setInt(0); }, c_step: (a: DF, b: DF) => { order.push(`link ${a.getInt()}`); b.setInt(a.getInt() + 1); } };
  const fillersBeforeChainEnd = (): number => order.slice(0, order.indexOf('link 4')).filter((x) => x.startsWith('fill')).length;
  for (const lanes of [1, 2]) {
    order.length = 0;
    const plain = await runInProcess(src.replace(/@ \{ priority: 100; \}/g, ''), ucodes, { lanes, args: ['50'] });
    assert.equal(plain.ok, true, plain.message);
    const without = fillersBeforeChainEnd();
    order.length = 0;
    const prio = await runInProcess(src, ucodes, { lanes, args: ['50'], policy: new PriorityPolicy(new DefaultPolicy()) });
    assert.equal(prio.ok, true, prio.message);
    const withp = fillersBeforeChainEnd();
    assert.ok(without >= 45, `${lanes} lane(s), FIFO: the chain ends after the fillers (${without} before its end)`);
    // one lane: strictly the chain first (one filler may already be on its way); two: the other lane runs fillers meanwhile
    assert.ok(withp <= (lanes === 1 ? 1 : 30), `${lanes} lane(s), priorities: ${withp} fillers before the chain's end\n${order.join(', ')}`);
  }
});

test('priorities on one lane: the next ready CF waits queued behind the running batch, in priority order; on two lanes one batch a lane', async () => {
  const src = `
import c_work(int) as work;
sub main() { for i = 0..11 cf w[i]: work(i) @ { priority: i; }; }`;
  for (const lanes of [1, 2]) {
    const order: number[] = [];
    const r = await runInProcess(src, { c_work: (i: number) => { order.push(i); } }, { lanes, policy: new PriorityPolicy(new DefaultPolicy(), undefined, 0) });
    assert.equal(r.ok, true, r.message);
    // one lane: a batch queued behind the running one, so the lane need not wait for the system
    // thread between two CFs; several: a later, more urgent CF is never queued behind another
    assert.equal(r.lanes.maxInflight, lanes === 1 ? 2 : 1, `${lanes} lane(s): most batches in flight on a lane`);
    if (lanes === 1) assert.deepEqual(order, Array.from({ length: 12 }, (_, i) => 11 - i));
  }
});

test('priorities: ready CFs are not held back while the system thread examines for many turns', async () => {
  // One chunk of a loop whose every iteration calls a sub of 30 CFs, each later one more urgent:
  // examining its 30 000 CFs takes many of the pump's turns. A turn that ends while examining
  // holds what is ready (a CF still to examine may come first), but only for a bounded time, so
  // the lane starts on the most urgent CF found so far instead of waiting for the last examination.
  const per = 30, n = 1000;
  const body = Array.from({ length: per }, (_, k) => `cf w${k}[j]: work(j * ${per} + ${k}) @ { priority: j * ${per} + ${k}; };`).join(' ');
  const src = `
import c_work(int) as work;
sub step(int j) { ${body} }
sub main(int n) { for j = 0..n-1 step(j); }`;
  const order: number[] = [];
  const r = await runInProcess(src, { c_work: (i: number) => { order.push(i); } }, { lanes: 1, args: [String(n)], policy: new PriorityPolicy(new DefaultPolicy(), undefined, 0) });
  assert.equal(r.ok, true, r.message);
  assert.equal(order.length, n * per);
  // held until everything was examined, the lane would run them strictly by priority, the last first
  assert.ok(order[0]! < n * per - 1, `the lane's first CF was the last one examined (${order[0]}): it waited for the whole examination`);
});

test('priorities: a short code\'s ready CFs go in batches of that code alone, by its measured cost; a long or unmeasured one, one CF a batch', async () => {
  const rule = new PriorityPolicy(new DefaultPolicy(), undefined, 1_000_000);
  const sizing = (headNs: number | undefined): BatchSizing => ({ cfNs: 0, ready: 20, lanes: 2, nodes: 1, stealable: false, fifo: false, ...(headNs === undefined ? {} : { headNs }) });
  assert.equal(rule.batchOneCode, true);
  assert.equal(rule.batchSize(sizing(200_000)), 5);
  assert.equal(rule.batchSize(sizing(999_999)), 1);
  assert.equal(rule.batchSize(sizing(2_000_000)), 1);
  assert.equal(rule.batchSize(sizing(0)), 1);
  assert.equal(rule.batchSize(sizing(undefined)), 1);
  assert.equal(new PriorityPolicy(new DefaultPolicy(), undefined, 0).batchSize(sizing(200_000)), 1);
  // the runtime's side: a batch of 4 asked for takes only the head's code, the ready queue (all
  // the a's, then all the b's, by priority) deciding which; one lane runs batches in order
  const src = `
import c_a(int) as a;
import c_b(int) as b;
sub main() { for i = 0..9 { cf x[i]: a(i) @ { priority: 100 - i; }; cf y[i]: b(i) @ { priority: 50 - i; }; } }`;
  class Fours extends ForwardingPolicy {
    override readonly batchOneCode: boolean;
    constructor(one: boolean) { super(new PriorityPolicy(new DefaultPolicy())); this.batchOneCode = one; }
    override batchSize(): number { return 4; }
  }
  const codesByBatch = async (one: boolean): Promise<string[]> => {
    const calls: string[] = [];
    const r = await runInProcess(src, { c_a: () => { calls.push('a'); }, c_b: () => { calls.push('b'); } }, { lanes: 1, policy: new Fours(one) });
    assert.equal(r.ok, true, r.message);
    let at = 0;
    return r.lanes.sent.map((b) => { const c = calls.slice(at, at + b.cfs.length).join(''); at += b.cfs.length; return c; });
  };
  const one = await codesByBatch(true);
  assert.deepEqual(one, ['aaaa', 'aaaa', 'aa', 'bbbb', 'bbbb', 'bb']);
  const mixed = await codesByBatch(false);
  assert.ok(mixed.some((b) => b.includes('a') && b.includes('b')), `without the rule a batch mixes the codes: ${mixed.join(' ')}`);
});

test('a policy priority hook orders ready CFs too', async () => {
  const src = `
import c_work(int) as work;
sub main() { for i = 0..19 cf w[i]: work(i); }`;
  const order: number[] = [];
  // declared, not detected: a forwarding policy has every hook
  class Reverse extends ForwardingPolicy {
    constructor() { super(new DefaultPolicy(), { orders: true }); }
    override priority(cf: { gid: string }): number { return Number(cf.gid.split('_')[1]); } // the iteration
    override batchSize(): number { return 1; }
  }
  const r = await runInProcess(src, { c_work: (i: number) => { order.push(i); } }, { lanes: 1, policy: new Reverse() });
  assert.equal(r.ok, true, r.message);
  assert.deepEqual(order, Array.from({ length: 20 }, (_, i) => 19 - i));
});

test('hang and fault in process: the message names the CF, its indices and position', async () => {
  const hang = await runInProcess(`
import c_show(value) as show;
sub main() { df x; for i = 0..1 cf w[i]: show(x[i]); }`, { c_show: () => {} }, { lanes: 1 });
  assert.equal(hang.kind, 'hang');
  assert.match(hang.message ?? '', /CF w\[0\] \(ucode c_show, id 0_0_0\) at test\.fa:3:33 waits for x\[0\]/);
  const fault = await runInProcess(`
import c_boom(int) as boom;
sub main() { for i = 0..3 cf b[i]: boom(i); }`, { c_boom: (i: number) => { if (i === 2) throw new Error(`boom ${i}`); } }, { lanes: 1 });
  assert.equal(fault.kind, 'fault');
  assert.match(fault.message ?? '', /exception in ucode c_boom: boom 2[\s\S]*in CF b\[2\] \(ucode c_boom, id 0_2_0\) at test\.fa:3:27/);
});

// ------------------------------------------------------------------ trace playback

const PLAYBACK = `
import c_first(name) as first;
import c_step(value, int, name) as step;
import c_work(int) as work;
sub chain(int c, int k) {
  df x;
  cf f[c]: first(x[0]);
  for i = 0..k-1 cf link[c][i]: step(x[i], c, x[i + 1]);
}
sub main(int n, int k) {
  for i = 0..n-1 cf w[i]: work(i);
  for c = 0..1 chain(c, k);
}`;

function playbackUcodes(log: string[]): Record<string, unknown> {
  return {
    c_first: (x: DF) => { log.push('first'); x.setInt(0); },
    c_step: (a: DF, c: number, b: DF) => { log.push(`link ${c}.${a.getInt()}`); b.setInt(a.getInt() + 1); },
    c_work: (i: number) => { log.push(`work ${i}`); },
  };
}

test('playback: a recorded schedule replays each CF on its recorded lane, known to the last one', async () => {
  // recorded under a policy no default would follow: everything on the last lane
  class LastLane extends DefaultPolicy {
    override chooseLane(l: LanesView): number { return l.inflight[2]! < 2 ? 2 : -1; }
  }
  const rec = new RecordingPolicy(new LastLane());
  const log1: string[] = [];
  const r1 = await runInProcess(PLAYBACK, playbackUcodes(log1), { lanes: 3, args: ['40', '30'], policy: rec });
  assert.equal(r1.ok, true, r1.message);
  assert.equal(rec.order.length, 40 + 2 * 31, 'every atomic CF recorded');
  assert.ok(rec.order.every(([, lane]) => lane === 2));
  const schedule: Schedule = { program: 'test.fa', args: ['40', '30'], nodes: 1, threads: 3, order: [rec.order] };
  const replay = new PlaybackPolicy(schedule, 0, new DefaultPolicy());
  const log2: string[] = [];
  const r2 = await runInProcess(PLAYBACK, playbackUcodes(log2), { lanes: 3, args: ['40', '30'], policy: replay });
  assert.equal(r2.ok, true, r2.message);
  assert.deepEqual([...log2].sort(), [...log1].sort(), 'the same CFs ran');
  assert.deepEqual(replay.stats, { replayed: rec.order.length, unknown: 0 });
  assert.deepEqual(new Set(r2.lanes.sent.map((b) => b.lane)), new Set([2]), 'every batch went to the recorded lane');
  // the default policy, for comparison, spreads the same program over the lanes
  const plain = await runInProcess(PLAYBACK, playbackUcodes([]), { lanes: 3, args: ['40', '30'] });
  assert.ok(new Set(plain.lanes.sent.map((b) => b.lane)).size > 1);
});

test('playback: inline decisions come from the record, not from measuring', async () => {
  const rec = new RecordingPolicy(new DefaultPolicy());
  const r1 = await runInProcess(PLAYBACK, playbackUcodes([]), { lanes: 2, args: ['10', '10'], policy: rec, inline: true });
  assert.equal(r1.ok, true, r1.message);
  // flip every decision: the replay must follow the record, whatever the costs say
  const flipped = rec.order.map(([gid, lane, inline]) => [gid, lane, 1 - inline] as [string, number, number]);
  const replay = new PlaybackPolicy({ program: 'test.fa', args: [], nodes: 1, threads: 2, order: [flipped] }, 0, new DefaultPolicy());
  const r2 = await runInProcess(PLAYBACK, playbackUcodes([]), { lanes: 2, args: ['10', '10'], policy: replay, inline: true });
  assert.equal(r2.ok, true, r2.message);
  const sentToWorkers = r2.lanes.sent.reduce((a, b) => a + b.cfs.length, 0);
  assert.equal(sentToWorkers, flipped.filter(([, , inline]) => inline === 0).length);
  assert.equal(r2.rt.stats.inline, flipped.filter(([, , inline]) => inline === 1).length);
});

test('playback: a graph the record does not know still completes, and says where the replay stopped applying', async () => {
  const rec = new RecordingPolicy(new DefaultPolicy());
  const r1 = await runInProcess(PLAYBACK, playbackUcodes([]), { lanes: 2, args: ['5', '5'], policy: rec });
  assert.equal(r1.ok, true, r1.message);
  const replay = new PlaybackPolicy({ program: 'test.fa', args: ['5', '5'], nodes: 1, threads: 2, order: [rec.order] }, 0, new DefaultPolicy());
  const log: string[] = [];
  const r2 = await runInProcess(PLAYBACK, playbackUcodes(log), { lanes: 2, args: ['8', '7'], policy: replay });
  assert.equal(r2.ok, true, r2.message);
  assert.equal(log.length, 8 + 2 * 8, 'every CF of the bigger graph ran');
  assert.equal(replay.stats.replayed, rec.order.length);
  assert.equal(replay.stats.unknown, 8 + 2 * 8 - rec.order.length);
  assert.match(replay.stats.firstUnknown!.label, /^(w|link)$/);
  assert.match(replay.stats.firstUnknown!.at, /^test\.fa:\d+:\d+$/);
});

test('the pump yields every few milliseconds while long CFs run inline (its clock is read by their cost, not only every 16 CFs)', async () => {
  class InlineAll extends DefaultPolicy {
    override runInline(): boolean { return true; }
  }
  const src = `
import c_first(name) as first;
import c_step(value, name) as step;
sub main(int n) {
  df x;
  cf f: first(x[0]);
  for i = 0..n-1 cf s[i]: step(x[i], x[i + 1]);
}`;
  const ucodes = { c_first: (x: DF) => x.setInt(0), c_step: (a: DF, b: DF) => { spin(2000); b.setInt(a.getInt() + 1); } };
  for (const lanes of [1, 2]) {
    // the event loop's turns while the program runs: 60 CFs of 2 ms in turns of a 4 ms slice
    // (plus the CF under way) make ~20; reading the clock only every 16 CFs made 4 turns
    let turns = 0, running = true;
    const tick = (): void => { turns++; if (running) setImmediate(tick); };
    const r = await runInProcess(src, ucodes, { lanes, args: ['60'], policy: new InlineAll(), inline: true, observe: () => setImmediate(tick) });
    running = false;
    assert.equal(r.ok, true, r.message);
    assert.equal(r.lanes.sent.length, 0, 'every CF ran inline');
    assert.ok(turns >= 10, `${lanes} lane(s): ${turns} turns of the event loop while 60 CFs of 2 ms ran`);
  }
});
