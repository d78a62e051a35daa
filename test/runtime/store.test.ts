// The DF store alone: the protocol of single assignment, request counts, destroy and push.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DfStore, FreedKeys, type KeptForm, type KeptKeys } from '../../src/runtime/node/store.js';
import { familyOf } from '../../src/runtime/node/freed.js';
import { KeyTable } from '../../src/program/keys.js';
import { runInProcess } from './harness.js';
import { Cf } from '../../src/runtime/node/fragment.js';
import { RequestRefused, RunFault } from '../../src/runtime/node/fault.js';
import type { Site } from '../../src/program/compile.js';
import { T_INT, T_JS, T_RAW, T_REAL, T_STRING, type DfValue } from '../../src/ucode/value.js';

const site = { id: 0, spawnNo: 0 } as unknown as Site;
let seq = 0;
const cf = (): Cf => new Cf(seq++, site, [], '', -1);
const int = (v: number): DfValue => ({ t: T_INT, v });

test('a posted DF is served to its readers and freed after req_count requests; one more is "too many requests"', () => {
  const freed: DfValue[] = [];
  const s = new DfStore((v) => freed.push(v));
  assert.deepEqual(s.post('x#0', int(5), 2), { waiters: null, remote: null });
  assert.equal(s.liveBytes, 4);
  assert.deepEqual(s.read('x#0', cf()), int(5));
  assert.equal(freed.length, 0);
  assert.deepEqual(s.read('x#0', cf()), int(5));
  assert.deepEqual(freed, [int(5)], 'freed when the count reached 0');
  assert.equal(s.liveBytes, 0);
  assert.throws(() => s.read('x#0', cf()), (e: Error) => e instanceof RunFault && /too many requests for DF x: it was freed/.test(e.message));
  // a node asking now is refused: that node names its own CF
  assert.throws(() => s.readRemote('x#0', 3), (e: Error) => e instanceof RequestRefused && e.node === 3 && /too many requests for DF x: it was freed/.test(e.message));
});

test('readers that came first wait; the post delivers to them in order and counts them', () => {
  const s = new DfStore();
  const a = cf(), b = cf();
  assert.equal(s.read('y#1.4', a), undefined);
  assert.deepEqual(a.pendingKeys(), ['y#1.4'], 'the reader now waits for it');
  assert.equal(s.readRemote('y#1.4', 2), undefined);
  assert.equal(s.read('y#1.4', b), undefined);
  const d = s.post('y#1.4', int(7), 3);
  assert.deepEqual(d.waiters, [a, b]);
  assert.deepEqual(d.remote, [2]);
  assert.equal(s.size, 0, 'three requests served: freed');
  assert.throws(() => s.post('y#1.4', int(8), -1), /assigned twice/);
});

test('more waiting readers than the count: the first ones in request order are served, the next one is named', () => {
  const s = new DfStore();
  const a = cf(), b = cf();
  s.read('z#0', a);
  s.read('z#0', b);
  const d = s.post('z#0', int(1), 1);
  assert.deepEqual(d.waiters, [a]);
  assert.equal(d.remote, null);
  assert.equal(d.excess?.cf, b);
  assert.match(d.excess!.message, /too many requests for DF z: its req_count 1 was served/);
  assert.equal(s.size, 0, 'freed: its count was used up');
});

test('the request too many is found across local readers and other nodes, in the order they asked', () => {
  const s = new DfStore(undefined, 0);
  const a = cf(), b = cf();
  s.read('m#0', a);
  s.readRemote('m#0', 2);
  s.read('m#0', b);
  const d = s.post('m#0', int(1), 2);
  assert.deepEqual(d.waiters, [a]);
  assert.deepEqual(d.remote, [2]);
  assert.equal(d.excess?.cf, b);
  assert.match(d.excess!.message, /DF m \(held by node 0\)/);

  const t = new DfStore(undefined, 0);
  const c = cf();
  t.readRemote('n#0', 3);
  t.read('n#0', c);
  t.readRemote('n#0', 1);
  const e = t.post('n#0', int(1), 1);
  assert.deepEqual(e.remote, [3]);
  assert.equal(e.waiters, null);
  assert.equal(e.excess?.cf, c, 'the local reader asked second');

  const u = new DfStore(undefined, 0);
  u.read('o#0', cf());
  u.readRemote('o#0', 4);
  const f = u.post('o#0', int(1), 1);
  assert.equal(f.excess?.node, 4, 'the remote request came second');
  assert.equal(f.excess?.cf, undefined);
});

test('a DF assigned twice names its first writer', () => {
  const s = new DfStore(undefined, 1, (site, node) => `CF of site ${site} on node ${node}`);
  s.post('q#0', int(1), -1, 7, 3);
  assert.throws(() => s.post('q#0', int(2), -1, 8, 1), (e: Error) => e.message === 'DF q (held by node 1) is assigned twice (Duplicate id in post): it already holds the value of CF of site 7 on node 3');
  s.post('r#0', int(1), 1);
  s.read('r#0', cf());
  assert.throws(() => s.post('r#0', int(2), -1), /DF r \(held by node 1\) is assigned twice \(Duplicate id in post\): it was assigned before, and freed/);
});

test('double assignment is an error naming the DF as the program names it', () => {
  const s = new DfStore();
  s.post('A#3.1.2', int(1), -1);
  assert.throws(() => s.post('A#3.1.2', int(2), -1), (e: Error) => /DF A\[1\]\[2\] is assigned twice/.test(e.message));
});

test('unspent: the values held whose req_count was not reached, with the requests that never came; unlimited and spent DFs are not named', () => {
  const s = new DfStore();
  s.post('x#0', int(1), 3);
  s.read('x#0', cf());
  s.post('u#0', int(2), -1);
  s.read('u#0', cf());
  s.post('y#0', int(3), 1);
  s.read('y#0', cf());
  s.expect('w#0', cf());
  s.post('v#0', { t: T_REAL, v: 0.5 }, 2);
  assert.deepEqual(s.unspent(), [{ key: 'x#0', left: 2, bytes: 4 }, { key: 'v#0', left: 2, bytes: 8 }]);
  s.read('x#0', cf());
  s.read('x#0', cf());
  assert.deepEqual(s.unspent().map((u) => u.key), ['v#0'], 'x spent: freed');
});

test('destroy: before the post the value is dropped; readers of it then fail; with readers or a positive count it is an error', () => {
  const s = new DfStore();
  s.destroy('d#0');
  assert.deepEqual(s.post('d#0', int(1), -1), { waiters: null, remote: null });
  assert.equal(s.size, 0, 'the value was dropped');
  const t = new DfStore();
  t.destroy('e#0');
  assert.throws(() => t.read('e#0', cf()), /requested after it was destroyed/);
  const u = new DfStore();
  u.read('f#0', cf());
  assert.throws(() => u.destroy('f#0'), /destroyed while CFs still wait/);
  const v = new DfStore();
  v.post('g#0', int(1), 2);
  assert.throws(() => v.destroy('g#0'), /with 2 request\(s\) still expected/);
  const w = new DfStore();
  w.post('h#0', int(1), -1);
  w.destroy('h#0');
  assert.equal(w.size, 0, 'an unlimited DF is freed by destroy');
});

test('an entry made when the writer is examined (willPost) changes no rule: reads, posts, destroy, double assignment, too many requests', () => {
  // keys handed out by a table, as a compiled reference locates them, and plain text alike
  const t = new KeyTable(2);
  const located = (a: number, b: number): string => { const k = `v#.${a}.${b}`; t.set('v#', t.pack([a, b]), k); return k; };
  for (const key of [(i: number) => located(i, 1), (i: number) => `w#.${i}.1`]) {
    const freed: DfValue[] = [];
    const s = new DfStore((v) => freed.push(v));
    // made, then posted, then read up to its count and freed
    s.willPost(key(0));
    assert.equal(s.posted(key(0)), false, 'made is not posted');
    assert.deepEqual(s.post(key(0), int(1), 1), { waiters: null, remote: null });
    assert.deepEqual(s.read(key(0), cf()), int(1));
    assert.deepEqual(freed, [int(1)]);
    assert.equal(s.size, 0);
    // the writer of a freed DF examined again: nothing made, its post is the second assignment
    s.willPost(key(0));
    assert.equal(s.size, 0, 'no entry for a freed DF');
    assert.throws(() => s.post(key(0), int(2), -1), /assigned twice \(Duplicate id in post\): it was assigned before, and freed/);
    assert.throws(() => s.read(key(0), cf()), /too many requests for DF v|too many requests for DF w/);
    // a reader that comes between the examination and the post waits and is served
    s.willPost(key(1));
    const r = cf();
    assert.equal(s.read(key(1), r), undefined);
    assert.deepEqual(s.post(key(1), int(3), 1).waiters, [r]);
    // made twice (examined again) is one entry; a second post is the double assignment
    s.willPost(key(2));
    s.willPost(key(2));
    s.post(key(2), int(4), -1, 5, 0);
    assert.throws(() => s.post(key(2), int(5), -1), /assigned twice \(Duplicate id in post\): it already holds the value of/);
    // destroyed before its post: a reader then fails, the value is dropped
    s.willPost(key(3));
    s.destroy(key(3));
    assert.throws(() => s.read(key(3), cf()), /requested after it was destroyed/);
    assert.deepEqual(s.post(key(3), int(6), -1), { waiters: null, remote: null });
    assert.equal(s.posted(key(3)), false, 'dropped');
  }
});

test('push: a value pushed before its CF waits is kept; a waiting CF is named when it comes', () => {
  const s = new DfStore();
  const c = cf();
  assert.equal(s.push('L[1]|x#0', int(3)), undefined);
  assert.deepEqual(s.takePushed('L[1]|x#0', c), int(3));
  const d = cf();
  assert.equal(s.takePushed('L[2]|x#0', d), undefined);
  assert.deepEqual(d.pendingKeys(), ['x#0']);
  assert.equal(s.push('L[2]|x#0', int(4)), d);
});

test('readers of another node\'s DF share one request: the first asks, the others only count their reads', () => {
  const s = new DfStore();
  const a = cf(), b = cf(), c = cf();
  assert.equal(s.awaitRemote('r#0', 1, a), true, 'the first reader requests the value');
  assert.equal(s.awaitRemote('r#0', 1, b), false, 'the next ones join the request on its way');
  assert.equal(s.awaitRemote('r#0', 1, c), false);
  assert.match(s.expectedFrom('r#0', 0, 2), /requested from node 1/);
  // granted for the request, 1 read left at the owner: a and b get it, c's read will be refused
  assert.deepEqual(s.remoteArrived('r#0', { v: int(4), granted: 1, left: 1, keep: true }), [a, b]);
  assert.match(s.expectedFrom('r#0', 0, 2), /requested from node 1/, 'c still waits (for the refusal)');
  assert.equal(s.refusedRead('r#0'), c, 'the refusal names the first reader still waiting');
  // the copy kept for later readers had no reads left: the next reader is too many, named here
  assert.throws(() => s.readCopy('r#0', cf()), (e: Error) => e instanceof RunFault && /too many requests for DF r \(held by node 1\)/.test(e.message));
});

test('a kept copy serves later readers while the owner said reads are left; unlimited DFs are not counted', () => {
  const s = new DfStore();
  const a = cf(), b = cf(), c = cf();
  s.awaitRemote('k#0', 2, a);
  assert.deepEqual(s.remoteArrived('k#0', { v: int(9), granted: 1, left: 2, keep: true }), [a]);
  assert.equal(s.copiesKept, 1);
  assert.equal(s.liveBytes, 4, 'the copy is memory held here');
  assert.deepEqual(s.readCopy('k#0', b), { v: int(9), counted: true });
  assert.deepEqual(s.readCopy('k#0', c), { v: int(9), counted: true });
  assert.throws(() => s.readCopy('k#0', cf()), /too many requests for DF k \(held by node 2\)/);
  assert.equal(s.refusedRead('k#0'), c, 'a refused read of the copy names the last CF that read it');
  s.dropCopy('k#0');
  assert.equal(s.copiesKept, 0);
  assert.equal(s.liveBytes, 0);
  assert.equal(s.readCopy('k#0', cf()), undefined, 'dropped: a reader asks the owner again');
  // an unlimited DF: every reader here uses the copy, nothing is counted
  s.awaitRemote('u#0', 1, a);
  s.remoteArrived('u#0', { v: int(1), granted: 1, left: -1, keep: true });
  for (let i = 0; i < 5; i++) assert.deepEqual(s.readCopy('u#0', cf()), { v: int(1), counted: false });
  // past the bound on copies the oldest go (their readers would ask the owner again)
  s.copyLimitBytes = 8;
  for (const k of ['c#1', 'c#2', 'c#3']) { s.awaitRemote(k, 1, cf()); s.remoteArrived(k, { v: int(1), granted: 1, left: -1, keep: true }); }
  assert.equal(s.readCopy('u#0', cf()), undefined, 'the oldest copy went first');
  assert.equal(s.readCopy('c#1', cf()), undefined);
  assert.deepEqual(['c#2', 'c#3'].map((k) => s.readCopy(k, cf())?.v), [int(1), int(1)]);
  assert.equal(s.liveBytes, 8);
  s.copyLimitBytes = 256 * 1024 * 1024;
  // a value that was freed by this node's requests is not kept
  s.awaitRemote('f#0', 1, a);
  s.remoteArrived('f#0', { v: int(1), granted: 1, left: 0, keep: false });
  assert.equal(s.readCopy('f#0', cf()), undefined);
});

test('the owner counts every read of a node: one value per node, copies dropped when the count is used up', () => {
  const dropped: [string, number[]][] = [];
  const s = new DfStore();
  s.onDrop = (key, nodes) => dropped.push([key, nodes]);
  // node 1 asks before the post, and one more reader of node 1 joins; node 2 asks once
  assert.equal(s.readRemote('p#0', 1), undefined);
  s.reads('p#0', 1, 1);
  assert.equal(s.readRemote('p#0', 2), undefined);
  const d = s.post('p#0', int(3), 5);
  assert.deepEqual(d.remote, [1, 1, 2], 'node 1 twice: its one response grants both');
  assert.equal(d.keep, true);
  assert.equal(d.left, 2);
  // a reader of node 2's copy, then node 1 asks for the last one by its copy too
  s.reads('p#0', 2, 1);
  assert.deepEqual(dropped, []);
  s.reads('p#0', 1, 1);
  assert.deepEqual(dropped, [['p#0', [1, 2]]], 'freed: both nodes drop their copies');
  assert.throws(() => s.reads('p#0', 2, 1), (e: Error) => e instanceof RequestRefused && e.node === 2 && /too many requests/.test(e.message));
  // a request served when the value is here: granted, with what is left; the last one keeps nothing
  s.post('q#0', int(1), 2);
  assert.deepEqual(s.readRemote('q#0', 3), { v: int(1), granted: 1, left: 1, keep: true });
  assert.deepEqual(s.readRemote('q#0', 4), { v: int(1), granted: 1, left: 0, keep: false });
  assert.deepEqual(dropped.at(-1), ['q#0', [3]], 'node 3 kept a copy; node 4 got the last read and keeps none');
  // unlimited: a copy everywhere, nothing left to count
  s.post('w#0', int(1), -1);
  assert.deepEqual(s.readRemote('w#0', 1), { v: int(1), granted: 1, left: -1, keep: true });
});

test('liveBytes gains a value\'s bytes at its post (or a copy\'s arrival) and loses exactly those at its free, whatever became of its buffers', () => {
  const s = new DfStore();
  const ab = new ArrayBuffer(1000), copied = new ArrayBuffer(300);
  const values: [string, DfValue, number][] = [
    ['i#0', int(1), 4], ['r#0', { t: T_REAL, v: 0.5 }, 8], ['s#0', { t: T_STRING, v: 'żółw' }, 8],
    ['b#0', { t: T_RAW, v: new Uint8Array(new SharedArrayBuffer(24)) }, 24], ['j#0', { t: T_JS, v: ab }, 1000],
  ];
  let sum = 0;
  for (const [k, v, bytes] of values) { s.post(k, v, 1); sum += bytes; assert.equal(s.liveBytes, sum, `${k} counted as ${bytes} bytes`); }
  s.awaitRemote('c#0', 1, cf());
  s.remoteArrived('c#0', { v: { t: T_JS, v: copied }, granted: 1, left: -1, keep: true });
  assert.equal(s.liveBytes, sum + 300, 'a kept copy counts too');
  // a ucode handed the buffers on (transferred: detached here, byteLength 0) after their post
  structuredClone([ab, copied], { transfer: [ab, copied] });
  assert.equal(ab.byteLength, 0);
  for (const [k] of values) s.read(k, cf());
  s.dropCopy('c#0');
  assert.equal(s.size, 0);
  assert.equal(s.copiesKept, 0);
  assert.equal(s.liveBytes, 0, 'every byte counted at the post is given back at the free');
});

test('freed keys: ranges per family, in any order, merged when they meet; other keys kept whole', () => {
  const f = new FreedKeys();
  const rnd = [5, 3, 4, 10, 7, 6, 0, 1, 2, 9, 8, 12];
  for (const i of rnd) f.add(`x#0.${i}`);
  for (let i = 0; i <= 12; i++) assert.equal(f.has(`x#0.${i}`), i !== 11, `x[${i}]`);
  assert.equal(f.has('x#0.-1'), false);
  assert.equal(f.has('x#1.3'), false, 'another instance of the family');
  f.add('x#0.11');
  for (let i = 0; i <= 12; i++) assert.ok(f.has(`x#0.${i}`));
  f.add('A#2.1.-3');
  assert.ok(f.has('A#2.1.-3') && !f.has('A#2.1.-2') && !f.has('A#2.2.-3'));
  f.add('s#4');
  assert.ok(f.has('s#4') && !f.has('s#5'));
  // a long sweep costs one range
  const g = new FreedKeys();
  for (let i = 0; i < 100_000; i++) g.add(`y#0.${i}`);
  assert.ok(g.has('y#0.99999') && !g.has('y#0.100000'));
  assert.equal((g as unknown as { ranges: Map<string, number[]> }).ranges.get('y#0')!.length, 2);
  // many families in turn (a stencil frees row t - 1 while it posts row t): each keeps its own
  const h = new FreedKeys();
  for (let t = 0; t < 40; t++) for (const x of [1, 0, 2]) { h.add(`v#0.${t}.${x}`); assert.equal(h.has(`v#0.${t + 1}.${x}`), false); }
  for (let t = 0; t < 40; t++) for (let x = 0; x < 4; x++) assert.equal(h.has(`v#0.${t}.${x}`), x < 3, `v[${t}][${x}]`);
  assert.equal(h.has('v#0.40.0'), false);
  assert.equal(h.has('v#0.4'), false, 'a prefix of a family is not the family');
});

// Through the examination: outputs' entries made when their writers are examined, keys told by
// the key table (two indices; one under a `name` parameter), on one node and across two. Every
// count exact (a CF that names a DF three times reads it once): each DF freed by its last read.
const STENCIL = `import c_init(int \`i, name \`x) as init;
import c_step(value \`l, value \`c, value \`r, name \`x) as step;
import c_link(value \`p, name \`x) as link;
import c_out(int \`tag, value \`a, value \`b, value \`c) as show;
import c_end(int \`tag, value \`a) as last;

sub chain(int n, name y)
{
    cf y0: init(0, y[0]) @ { req_count y[0] = 1; };
    for i = 0..n-1
        cf l[i]: link(y[i], y[i + 1]) @ { req_count y[i + 1] = 1; };
    cf e: last(n, y[n]);
}

sub main(int t, int w)
{
    df v, z;
    for i = 0..w+1
        cf v0[i]: init(i, v[0][i]) @ { req_count v[0][i] = 3 - 2 * (i == 0) - (i == 1) - (i == w) - 2 * (i == w + 1); locator_cyclic: i; };
    for s = 1..t
        for i = 1..w
            cf st[s][i]: step(v[s-1][i-1], v[s-1][i], v[s-1][i+1], v[s][i]) @ { req_count v[s][i] = (s < t) * (3 - (i == 1) - (i == w)) + (s == t); locator_cyclic: i; };
    for s = 1..t
    {
        cf e0[s]: init(0, v[s][0]) @ { req_count v[s][0] = 1; locator_cyclic: s; };
        cf e1[s]: init(0, v[s][w+1]) @ { req_count v[s][w+1] = 1; locator_cyclic: s; };
    }
    chain(5, z[1]);
    chain(6, z[2]);
    for i = 0..w+1
        cf tail[i]: show(i, v[t][i], v[t][i], v[t][i]) @ { locator_cyclic: i; };
}
`;

type IntDf = { getInt(): number; setInt(v: number): void };

test('a program\'s DFs through the examination: outputs made early, freed by their counts, on one node and two', async () => {
  for (const [nodes, lanes] of [[1, 1], [1, 2], [2, 1]] as const) {
    const seen: string[] = [];
    const ucodes = {
      c_init: (i: number, x: IntDf) => x.setInt(i),
      c_step: (l: IntDf, c: IntDf, r: IntDf, x: IntDf) => x.setInt(l.getInt() + c.getInt() + r.getInt()),
      c_link: (p: IntDf, x: IntDf) => x.setInt(p.getInt() + 1),
      c_out: (tag: number, a: IntDf) => { seen.push(`${tag}:${a.getInt()}`); },
      c_end: (n: number, a: IntDf) => { seen.push(`z${n}:${a.getInt()}`); },
    };
    const r = await runInProcess(STENCIL, ucodes, { nodes, lanes, args: ['3', '4'] });
    assert.equal(r.ok, true, `${nodes}×${lanes}: ${r.message}`);
    // rows from 0..5 with zero edges: [0 3 6 9 12 0], [0 9 18 27 21 0], [0 27 54 66 48 0]
    assert.deepEqual(seen.sort(), ['0:0', '1:27', '2:54', '3:66', '4:48', '5:0', 'z5:5', 'z6:6'], `${nodes}×${lanes}`);
    for (const n of r.nodes) assert.equal(n.rt.st.store.size, 0, `${nodes}×${lanes}: node ${n.rank} freed every DF`);
  }
});

test('a DF written again after its count freed it is named as assigned twice, its writer examined after the free', async () => {
  const src = `import c_make(int \`v, name \`x) as make;
import c_use(value \`x) as use;

sub main()
{
    df x;
    cf a: make(1, x[1]) @ { req_count x[1] = 1; };
    cf r: use(x[1]);
    cf b: make(2, x[1]);
}
`;
  const r = await runInProcess(src, { c_make: (v: number, x: { setInt(v: number): void }) => x.setInt(v), c_use: () => {} });
  assert.equal(r.ok, false);
  assert.match(r.message ?? '', /DF x\[1\] is assigned twice \(Duplicate id in post\): it was assigned before, and freed/);
});

test('a DF spent without the store (a planned loop kept it inside) is remembered as freed: one more request or post is reported', () => {
  const s = new DfStore();
  assert.equal(s.spent('k#0'), undefined);
  assert.throws(() => s.read('k#0', cf()), (e: Error) => e instanceof RunFault && /too many requests for DF k: it was freed/.test(e.message));
  assert.throws(() => s.post('k#0', int(1), -1), /DF k is assigned twice \(Duplicate id in post\): it was assigned before, and freed/);
  // spent twice: the loop's output assigned twice
  assert.equal(s.spent('k#0.1'), undefined);
  assert.throws(() => s.spent('k#0.1'), /DF k\[1\] is assigned twice/);
  // already holding a value from outside the loop
  s.post('k#0.2', int(2), -1);
  assert.throws(() => s.spent('k#0.2'), /DF k\[2\] is assigned twice/);
  // a reader from outside already waits: its request is the one too many, and it keeps waiting
  const r = cf();
  assert.equal(s.read('k#0.3', r), undefined);
  assert.match(s.spent('k#0.3') ?? '', /too many requests for DF k\[3\]: it was freed/);
  // destroyed before it was made: dropped, as a post drops it
  s.destroy('k#0.4');
  assert.equal(s.spent('k#0.4'), undefined);
  assert.equal(s.read('k#0.4', cf()), undefined, 'nothing remembered of it: a later reader waits, as after a dropped post');
});

// A planned loop's kept outputs v[t][0] and v[t][1] (each read by the next iteration only),
// recorded by numbers (spentIn) instead of key by key (spent).
const V0: KeptForm = { family: familyOf('v#', [], 2), ar: 1, br: 0, ac: 0, bc: 0, d: 1 };
const V1: KeptForm = { ...V0, bc: 1 };
const keptKeys = (from: number, last: number): KeptKeys => ({ forms: [V0, V1], from, last, hit: false, made: -1 });

test('a loop\'s kept outputs recorded by numbers answer every request, post and question as the same keys spent one by one', () => {
  // iterations 1..9 of a loop over 1..10 kept (the 10th escapes: its readers would be after the loop)
  const spend = (byNumbers: boolean): DfStore => {
    const s = new DfStore();
    if (byNumbers) {
      assert.ok(s.watchKept(keptKeys(1, 10), 100));
      for (let t = 1; t <= 9; t++) for (const f of [V0, V1]) assert.ok(s.spentIn(f, t), `v[${t}][${f.bc}]`);
      s.unwatchKept();
    } else for (let t = 1; t <= 9; t++) for (const x of [0, 1]) assert.equal(s.spent(`v#.${t}.${x}`), undefined);
    return s;
  };
  const outcome = (f: () => unknown): string => { try { const r = f(); return `ok ${r === undefined ? '-' : JSON.stringify(r)}`; } catch (e) { return `${(e as Error).constructor.name}: ${(e as Error).message}`; } };
  const ops: [string, (s: DfStore, key: string) => unknown][] = [
    ['read', (s, key) => s.read(key, cf())], ['post', (s, key) => s.post(key, int(1), 2)], ['spent', (s, key) => s.spent(key)],
    ['readRemote', (s, key) => s.readRemote(key, 1)], ['posted', (s, key) => s.posted(key)], ['willPost then post', (s, key) => { s.willPost(key); return s.post(key, int(1), 1); }],
  ];
  for (let t = -1; t <= 11; t++) {
    for (const x of [0, 1, 2]) {
      const key = `v#.${t}.${x}`;
      for (const [name, op] of ops) assert.equal(outcome(() => op(spend(true), key)), outcome(() => op(spend(false), key)), `${name} ${key}`);
    }
  }
  // (not vacuous: a kept key is freed, the next row's is not)
  assert.match(outcome(() => spend(true).read('v#.5.1', cf())), /too many requests for DF v\[5\]\[1\]: it was freed/);
  assert.match(outcome(() => spend(true).post('v#.9.0', int(1), 1)), /DF v\[9\]\[0\] is assigned twice \(Duplicate id in post\): it was assigned before, and freed/);
  assert.equal(outcome(() => spend(true).read('v#.10.0', cf())), 'ok -');
});

test('kept outputs go key by key where an entry stands for one: a reader waiting, a value posted, a destroy, an entry made while watched; a key freed before', () => {
  // entries before the watch: a reader from outside, a value, a destroy before the post
  const before: [string, (s: DfStore) => void, RegExp | undefined][] = [
    ['a reader waits', (s) => { assert.equal(s.read('v#.5.1', cf()), undefined); }, /too many requests for DF v\[5\]\[1\]: it was freed/],
    ['a value is there', (s) => { s.post('v#.6.0', int(6), 2); }, undefined],
    ['destroyed before made', (s) => { s.destroy('v#.7.0'); }, undefined],
  ];
  for (const [what, make, excess] of before) {
    const s = new DfStore();
    make(s);
    assert.equal(s.watchKept(keptKeys(1, 10), 100), false, what);
    assert.equal(s.spentIn(V0, 2), false, `${what}: key by key`);
    if (excess) assert.match(s.spent('v#.5.1') ?? '', excess, what);
  }
  const s = new DfStore();
  s.post('v#.6.0', int(6), 2);
  assert.throws(() => s.spent('v#.6.0'), /DF v\[6\]\[0\] is assigned twice/);
  // what does not stand for a kept key: an iteration before the turn's, one that escapes, another family or shape
  const other = new DfStore();
  for (const key of ['v#.0.0', 'v#.10.0', 'v#.4.2', 'w#.4.0', 'v#1.4.0', 'v#.4', 'v#.4.0.0']) other.read(key, cf());
  assert.ok(other.watchKept(keptKeys(1, 10), 100));
  // more entries than the budget: not read, key by key
  assert.equal(other.watchKept(keptKeys(1, 10), 6), false);
  // made while watched: a hit, key by key from then on, and read again at the next watch
  const w = new DfStore(), k = keptKeys(1, 10);
  assert.ok(w.watchKept(k, 100));
  assert.ok(w.spentIn(V0, 1));
  w.read('v#.8.0', cf());
  assert.ok(k.hit);
  assert.equal(w.spentIn(V0, 2), false);
  w.unwatchKept();
  assert.equal(w.watchKept(k, 100), false);
  // made between two watches: read at the next
  const b = new DfStore(), kb = keptKeys(1, 10);
  assert.ok(b.watchKept(kb, 100));
  b.unwatchKept();
  b.read('v#.3.1', cf());
  assert.equal(b.watchKept(kb, 100), false);
  // no watch: key by key
  assert.equal(new DfStore().spentIn(V0, 1), false);
  // freed before (assigned twice): not recorded, and spent() reports it
  const f = new DfStore();
  assert.equal(f.spent('v#.3.0'), undefined);
  assert.ok(f.watchKept(keptKeys(1, 10), 100));
  assert.equal(f.spentIn(V0, 3), false);
  assert.throws(() => f.spent('v#.3.0'), /DF v\[3\]\[0\] is assigned twice/);
});
