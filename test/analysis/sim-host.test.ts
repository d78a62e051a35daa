// The replay on a shared machine (sim/host.ts), every rule on a hand-built graph with a known
// answer: processor sharing of a host's cores, the system threads' per-message, per-byte and
// per-fragment costs on both sides of a hop, one job at a time per system thread, hops through a
// DF's owner; and the fit of that model from a profile (comm.ts fitHost).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { replayOnHosts, type HostModel } from '../../src/analysis/sim/host.js';
import { replayPlacement } from '../../src/analysis/sim/placement.js';
import { DEFAULT_CONTENTION, DEFAULT_HOST_BYTES_PER_NS, fitHost, fitTransfers } from '../../src/analysis/balance/comm.js';
import { aloneFactors, overlapShares } from '../../src/analysis/balance/contention.js';
import type { Profile } from '../../src/analysis/balance/profile.js';
import { namesOf } from '../../src/analysis/balance/names.js';

const free: HostModel = { hostOf: [0, 1, 2], cores: [Infinity, Infinity, Infinity], msgNs: 0, byteNs: 0, wireNs: 0, cfNs: 0 };
// 0 (20) → 1 (30) through DF 0 of 100 bytes; 2 (40) independent
const g = { n: 3, duration: [20, 30, 40], release: [0, 0, 0], depStart: [0, 0, 1, 1], depFrom: [0], depDf: [0], dfBytes: [100] };

test('host replay without costs or sharing is the plain replay', () => {
  for (const node of [[0, 0, 0], [0, 1, 0], [0, 1, 1]]) {
    const a = replayOnHosts(g, { nodes: 2, lanes: 1, node, dfOwner: [-1], host: free });
    const b = replayPlacement(g, { nodes: 2, lanes: 1, node, dfOwner: [-1], transferNs: () => 0 });
    assert.equal(a.makespan, b.makespan, `placement ${node}`);
    assert.deepEqual(Array.from(a.busy), Array.from(b.busy));
  }
});

test('processor sharing: nodes on one host share its cores', () => {
  // two independent CFs of 40 on two nodes: one core between them → both run at half speed
  const two = { n: 2, duration: [40, 40], release: [0, 0], depStart: [0, 0, 0], depFrom: [], depDf: [], dfBytes: [] };
  const own = replayOnHosts(two, { nodes: 2, lanes: 1, node: [0, 1], dfOwner: [], host: { ...free, hostOf: [0, 1] } });
  assert.equal(own.makespan, 40, 'a host each');
  const shared = replayOnHosts(two, { nodes: 2, lanes: 1, node: [0, 1], dfOwner: [], host: { ...free, hostOf: [0, 0], cores: [1] } });
  assert.equal(shared.makespan, 80, 'one core: 40 + 40');
  assert.deepEqual(Array.from(shared.finish), [80, 80], 'processor sharing, not one after the other');
  // unequal work: 20 and 60 on one core: both at half speed until 40, then the rest at full speed
  const uneq = replayOnHosts({ ...two, duration: [20, 60] }, { nodes: 2, lanes: 1, node: [0, 1], dfOwner: [], host: { ...free, hostOf: [0, 0], cores: [1] } });
  assert.deepEqual(Array.from(uneq.finish), [40, 80]);
  const twoCores = replayOnHosts(two, { nodes: 2, lanes: 1, node: [0, 1], dfOwner: [], host: { ...free, hostOf: [0, 0], cores: [2] } });
  assert.equal(twoCores.makespan, 40, 'as many cores as threads: no slowdown');
});

test('a hop costs both system threads per message and per byte, and the wire between them', () => {
  const host = { ...free, msgNs: 5, byteNs: 0.1, wireNs: 7 };
  const r = replayOnHosts(g, { nodes: 2, lanes: 1, node: [0, 1, 0], dfOwner: [-1], host });
  // 0 ends at 20 (node 0's lane), send 5 + 10, wire 7, receive 5 + 10: 1 starts at 57, ends at 87;
  // 2 runs after 0 on node 0: 20 + 40 = 60
  assert.equal(r.start[1], 57);
  assert.equal(r.makespan, 87);
  assert.deepEqual(Array.from(r.sysBusy), [15, 15]);
  assert.equal(r.bytesMoved, 100);
  // through the DF's owner, node 2: two hops, each paid on both sides
  const via = replayOnHosts(g, { nodes: 3, lanes: 1, node: [0, 1, 0], dfOwner: [2], host });
  assert.equal(via.start[1], 20 + 2 * (15 + 7 + 15));
  assert.deepEqual(Array.from(via.sysBusy), [15, 15, 30]);
  assert.equal(via.bytesMoved, 200);
});

test('a system thread does one job at a time, and its work shares the host with the workers', () => {
  // 0 writes two DFs read by 1 and 2 on node 1: the receives queue on node 1's system thread
  const fan = { n: 3, duration: [10, 10, 10], release: [0, 0, 0], depStart: [0, 0, 1, 2], depFrom: [0, 0], depDf: [0, 1], dfBytes: [0, 0] };
  const host = { ...free, msgNs: 10 };
  const r = replayOnHosts(fan, { nodes: 2, lanes: 2, node: [0, 1, 1], dfOwner: [-1, -1], host });
  // sends 10–20 and 20–30 on node 0; receives 20–30 and 30–40 on node 1
  assert.deepEqual([r.start[1], r.start[2]], [30, 40]);
  // a dispatch cost per CF on its node's system thread before it starts, paid when a lane is free
  // to take it: the lane waits for each (0 at 3–23, 2 at 26–66, 1 at 69–99)
  const cf = replayOnHosts(g, { nodes: 1, lanes: 1, node: [0, 0, 0], dfOwner: [-1], host: { ...free, cfNs: 3 } });
  assert.equal(cf.makespan, 3 * 3 + 20 + 40 + 30);
  assert.deepEqual(Array.from(cf.start), [3, 69, 26]);
  // two lanes: the system thread dispatches one CF at a time (2 waits for 0's dispatch)
  const two = replayOnHosts(g, { nodes: 1, lanes: 2, node: [0, 0, 0], dfOwner: [-1], host: { ...free, cfNs: 3 } });
  assert.deepEqual(Array.from(two.start), [3, 26, 6]);
  // one core for a worker and the system thread: the send's 50 slows the independent CF beside it
  const one = replayOnHosts(g, { nodes: 2, lanes: 1, node: [0, 1, 0], dfOwner: [-1], host: { ...free, hostOf: [0, 0], cores: [1], msgNs: 50 } });
  assert.ok(one.finish[2]! > 20 + 40, `CF 2 shares the core with the send: ends at ${one.finish[2]}`);
});

/** The fields fitHost reads, by hand. */
function prof(o: Partial<Profile>): Profile {
  return {
    program: 'p.fa', args: [], nodes: 2, threads: 1, policy: 'default', n: 10, gid: namesOf([]), node: new Int32Array(10), start: new Float64Array(10), finish: new Float64Array(10),
    created: new Float64Array(10), cpu: new Float64Array(10), cpuExact: true, code: new Int32Array(10), depStart: new Int32Array(11), depFrom: new Int32Array(), depDf: new Int32Array(),
    dfs: 0, dfKey: namesOf([]), dfWriter: new Int32Array(), dfBytes: new Float64Array(), dfOwner: new Int32Array(), xferBytes: new Float64Array(), xferNs: new Float64Array(), tEnd: 0, warnings: [], ...o,
  };
}

test('the host model from a trace: shared host, per-message, per-byte and per-fragment costs', () => {
  assert.equal(fitHost(prof({}), fitTransfers(prof({}))), undefined, 'a trace that does not say where its nodes ran');
  const base = { hostOf: Int32Array.from([0, 0]), hostCores: [2], sendNs: Float64Array.from([40e3, 50e3, 60e3]), sysWallNs: Float64Array.from([4e6, 2e6]), workerShare: Float64Array.from([0.5, 0.5]) };
  // four small hops; no large one: the default per-byte cost
  const small = prof({ ...base, xferBytes: Float64Array.from([0, 0, 0, 0]), xferNs: Float64Array.from([1e6, 1e6, 1e6, 1e6]) });
  const h = fitHost(small, fitTransfers(small))!;
  assert.deepEqual(Array.from(h.hostOf), [0, 0]);
  assert.deepEqual(Array.from(h.cores), [2]);
  assert.equal(h.msgNs, 50e3, 'the median send');
  assert.equal(h.byteNs, 1 / DEFAULT_HOST_BYTES_PER_NS);
  assert.equal(h.wireNs, 1e6 - 2 * 50e3, 'the latency less both sides\' message cost');
  // system threads: 3 ms of CPU (busy time × workers' share), less 4 hops × 2 sides × 50 µs, over 10 CFs
  assert.ok(Math.abs(h.cfNs - (3e6 - 8 * 50e3) / 10) < 1e-6, `per CF ${h.cfNs}`);
  // large hops: the fastest tenth gives the per-byte cost, not the median (hops that waited)
  const ns = [1e6, 2e6, 4e6, 8e6, 16e6, 32e6, 64e6, 128e6, 256e6, 512e6];
  const large = prof({ ...base, xferBytes: Float64Array.from(ns, () => 1e6), xferNs: Float64Array.from(ns) });
  assert.equal(fitHost(large, fitTransfers(large))!.byteNs, 1);
});

test('a CF placed away from the node that spawns it is shipped: a message on both system threads and the wire before it is released', () => {
  const host = { ...free, msgNs: 5, wireNs: 7 };
  // 2 (40, independent) spawned on node 0: run there, released at 0; run on node 1, it arrives at 5 + 7 + 5
  const spawned = { ...g, spawn: [0, 0, 0] };
  const home = replayOnHosts(spawned, { nodes: 2, lanes: 1, node: [0, 0, 0], dfOwner: [-1], host });
  assert.deepEqual(Array.from(home.sysBusy), [0, 0], 'nothing shipped, nothing paid');
  const away = replayOnHosts(spawned, { nodes: 2, lanes: 1, node: [0, 0, 1], dfOwner: [-1], host });
  assert.equal(away.start[2], 17);
  assert.equal(away.finish[2], 57);
  assert.deepEqual(Array.from(away.sysBusy), [5, 5]);
  assert.equal(away.bytesMoved, 0, 'a shipped CF is a message, not a DF\'s bytes');
  // shipped once in the trace and placed back where it was spawned: no message
  const back = replayOnHosts({ ...g, spawn: [0, 0, 1] }, { nodes: 2, lanes: 1, node: [0, 0, 1], dfOwner: [-1], host });
  assert.equal(back.start[2], 0);
  // a graph that does not say where its CFs were spawned ships nothing
  assert.equal(replayOnHosts(g, { nodes: 2, lanes: 1, node: [0, 0, 1], dfOwner: [-1], host }).start[2], 0);
});

test('the host model from a trace: the CFs the traced run shipped are messages, not dispatch cost', () => {
  const base = { hostOf: Int32Array.from([0, 0]), hostCores: [2], sendNs: Float64Array.from([50e3]), sysWallNs: Float64Array.from([4e6, 2e6]), workerShare: Float64Array.from([0.5, 0.5]), xferBytes: Float64Array.from([0]), xferNs: Float64Array.from([1e6]) };
  const none = prof({ ...base, spawn: new Int32Array(10) });
  const three = prof({ ...base, spawn: new Int32Array(10), node: Int32Array.from([1, 1, 1, 0, 0, 0, 0, 0, 0, 0]) });
  const a = fitHost(none, fitTransfers(none))!, b = fitHost(three, fitTransfers(three))!;
  assert.ok(Math.abs(a.cfNs - (3e6 - 2 * 50e3) / 10) < 1e-6, `per CF ${a.cfNs}`);
  assert.ok(Math.abs(b.cfNs - (3e6 - 2 * 4 * 50e3) / 10) < 1e-6, `per CF ${b.cfNs}: three CFs shipped, three messages more on each side`);
});

test('a DF crosses to a reading node once: its later readers there wait for that crossing or read the copy', () => {
  // 0 (10) on node 0 writes DF 0 (100 bytes), read by 1 (10), 2 (10) and 3 (10) on node 1
  const fan = { n: 4, duration: [10, 10, 10, 10], release: [0, 0, 0, 0], depStart: [0, 0, 1, 2, 3], depFrom: [0, 0, 0], depDf: [0, 0, 0], dfBytes: [100] };
  const host = { ...free, msgNs: 5, byteNs: 0.1, wireNs: 7 };
  const r = replayOnHosts(fan, { nodes: 2, lanes: 1, node: [0, 1, 1, 1], dfOwner: [-1], host });
  assert.deepEqual(Array.from(r.sysBusy), [15, 15], 'one send, one receive');
  assert.equal(r.bytesMoved, 100);
  // 0 ends at 10; 15 + 7 + 15: the copy is on node 1 at 47; its three readers run one after the other
  assert.deepEqual(Array.from(r.start).slice(1), [47, 57, 67]);
  const plain = replayPlacement(fan, { nodes: 2, lanes: 1, node: [0, 1, 1, 1], dfOwner: [-1], transferNs: () => 0 });
  assert.equal(plain.bytesMoved, 100, 'without a host model too');
});

test('contention: while more than one core of a host is busy its work stretches, and the CPU time a CF uses with it', () => {
  const two = { n: 2, duration: [10, 30], release: [0, 0], depStart: [0, 0, 0], depFrom: [], depDf: [], dfBytes: [] };
  const on = (hostOf: number[], cores: number[], contention: number) => replayOnHosts(two, { nodes: 2, lanes: 1, node: [0, 1], dfOwner: [], host: { ...free, hostOf, cores, contention } });
  // both busy at 1/1.5 until CF 0 ends (10 of work at 15); CF 1 has done 10 of its 30, the rest alone: 35
  const r = on([0, 0], [2], 1.5);
  assert.deepEqual(Array.from(r.finish), [15, 35]);
  assert.deepEqual(Array.from(r.cpu), [15, 35], 'CPU time: 15 stretched, then 20 alone');
  assert.deepEqual(Array.from(r.busy), [15, 35]);
  assert.deepEqual(Array.from(on([0, 1], [2, 2], 1.5).finish), [10, 30], 'a host each: nothing shared');
  assert.deepEqual(Array.from(on([0, 0], [2], 1).finish), [10, 30], 'contention 1: the cores do not slow each other');
  // C cores: linear in the busy cores beyond one — 2 of 3 busy: 1 + 0.5 · 1 / 2 = 1.25
  assert.deepEqual(Array.from(on([0, 0], [3], 1.5).finish), [12.5, 32.5]);
  // one core: processor sharing, no contention on top (both at half speed until 20, then 20 alone)
  assert.deepEqual(Array.from(on([0, 0], [1], 1.5).finish), [20, 40]);
  assert.deepEqual(Array.from(on([0, 0], [1], 1.5).cpu), [10, 30], 'a shared core: each CF still uses its work\'s CPU time');
});

test('contention in the trace: the share of each CF\'s interval another CF of its host ran, and its time alone', () => {
  // a [0, 10] node 0, b [5, 15] node 1, c [20, 30] node 0, d [20, 30] node 0 (another lane)
  const p = { n: 4, node: Int32Array.from([0, 1, 0, 0]), start: Float64Array.from([0, 5, 20, 20]), finish: Float64Array.from([10, 15, 30, 30]) };
  assert.deepEqual(Array.from(overlapShares(p, [0, 0])), [0.5, 0.5, 1, 1], 'one host');
  assert.deepEqual(Array.from(overlapShares(p, [0, 1])), [0, 0, 1, 1], 'a host each: a and b never met; c and d share node 0');
  assert.deepEqual(Array.from(overlapShares(p)), [0, 0, 1, 1], 'without hosts: each node its own');
  // back to back is no overlap
  assert.deepEqual(Array.from(overlapShares({ n: 2, node: Int32Array.from([0, 1]), start: Float64Array.from([0, 10]), finish: Float64Array.from([10, 20]) }, [0, 0])), [0, 0]);
  assert.deepEqual(Array.from(aloneFactors(p, 1.5, [0, 0])), [0.8, 0.8, 1 / 1.5, 1 / 1.5]);
  // the fit carries the contention: the machine's by default
  const h = { hostOf: Int32Array.from([0, 0]), hostCores: [2], sendNs: Float64Array.from([50e3]), sysWallNs: Float64Array.from([0, 0]), workerShare: Float64Array.from([1, 1]) };
  assert.equal(fitHost(prof(h), fitTransfers(prof(h)))!.contention, DEFAULT_CONTENTION);
  assert.equal(fitHost(prof(h), fitTransfers(prof(h)), 1)!.contention, 1);
});

test('capacity: a node whose threads get half a core takes twice the wall time for the same CPU time', () => {
  const two = { n: 2, duration: [40, 40], release: [0, 0], depStart: [0, 0, 0], depFrom: [], depDf: [], dfBytes: [] };
  const host = { ...free, hostOf: [0, 0], cores: [2] };
  const r = replayOnHosts(two, { nodes: 2, lanes: 1, node: [0, 1], dfOwner: [], host: { ...host, capacity: [0.5, 1] } });
  assert.deepEqual(Array.from(r.finish), [80, 40], 'node 0 at half speed, node 1 at full');
  assert.deepEqual(Array.from(r.cpu), [40, 40], 'the CPU time used is the work');
  assert.deepEqual(Array.from(r.busy), [40, 40]);
  // its system thread too: a hop's send on node 0 (10 of CPU) takes 20
  const hop = replayOnHosts(g, { nodes: 2, lanes: 1, node: [0, 1, 0], dfOwner: [-1], host: { ...free, msgNs: 10, capacity: [0.5, 1] } });
  // 0 ends at 40 (20 of work at half speed); send 20, receive 10: 1 starts at 70
  assert.equal(hop.start[1], 70);
  assert.deepEqual(Array.from(hop.sysBusy), [10, 10], 'system-thread CPU, not its wall time');
  const none = replayOnHosts(two, { nodes: 2, lanes: 1, node: [0, 1], dfOwner: [], host });
  assert.deepEqual(Array.from(none.finish), [40, 40], 'without capacity: whole cores');
});
