// The node runtime in process (test/runtime/harness.ts): the mechanism and its policy seams,
// without worker threads or processes. Each test runs in milliseconds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runInProcess } from './harness.js';
import type { DF } from '../../src/ucode/df.js';
import { DefaultPolicy } from '../../src/runtime/policy/default.js';
import { PriorityPolicy } from '../../src/runtime/policy/priority.js';
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
    const prio = await runInProcess(src, ucodes, { lanes, args: ['50'], policy: new PriorityPolicy() });
    assert.equal(prio.ok, true, prio.message);
    const withp = fillersBeforeChainEnd();
    assert.ok(without >= 45, `${lanes} lane(s), FIFO: the chain ends after the fillers (${without} before its end)`);
    // one lane: strictly the chain first (one filler may already be on its way); two: the other lane runs fillers meanwhile
    assert.ok(withp <= (lanes === 1 ? 1 : 30), `${lanes} lane(s), priorities: ${withp} fillers before the chain's end\n${order.join(', ')}`);
  }
});

test('a policy priority hook orders ready CFs too', async () => {
  const src = `
import c_work(int) as work;
sub main() { for i = 0..19 cf w[i]: work(i); }`;
  const order: number[] = [];
  class Reverse extends DefaultPolicy {
    priority(cf: { gid: string }): number { return Number(cf.gid.split('_')[1]); } // the iteration
    override batchSize(): number { return 1; }
  }
  const r = await runInProcess(src, { c_work: (i: number) => { order.push(i); } }, { lanes: 1, policy: new Reverse() as SchedulingPolicy });
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
