// Distribution files and the policies that apply them: every bad file refused with the file,
// the entry and the field at fault; merging; the distribution policy's answers; policies
// composed by delegation (declared capabilities, each with its own storage on fragments).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkDistribution, DistributionError, mergeDistributions, readDistribution, unfitFor, writeDistribution, type Distribution } from '../../src/runtime/policy/distribution-file.js';
import { DistributionPolicy } from '../../src/runtime/policy/distribution.js';
import { DefaultPolicy, DEFAULT_CAPS } from '../../src/runtime/policy/default.js';
import { ForwardingPolicy } from '../../src/runtime/policy/forward.js';
import { choosePolicy } from '../../src/runtime/policy/select.js';
import { FragmentSlot, type FragmentView } from '../../src/runtime/policy/types.js';
import { compileSource, runInProcess } from './harness.js';
import { PLACES } from './places.js';

function dist(o: Partial<Distribution> = {}): Distribution {
  return {
    format: 'luna-ts-distribution', version: 1, program: 'p.fa', args: [], nodes: 2, decision: 'apply',
    made: { strategy: 'seed', traces: ['t'], merged: [], at: '2026-01-01T00:00:00Z' }, cfs: { '3_1_0': 1 }, dfs: { 'x#3_1': 1 }, ...o,
  };
}

const refuses = (v: unknown, re: RegExp) => assert.throws(() => checkDistribution(v, 'd.json'), (e: Error) => e instanceof DistributionError && re.test(e.message) && e.message.startsWith('d.json: '), `expected ${re}`);

test('a good file reads back as written', () => {
  const dir = mkdtempSync(join(tmpdir(), 'luna-dist-'));
  try {
    const path = join(dir, 'd.json');
    writeDistribution(path, dist());
    assert.deepEqual(readDistribution(path), dist());
  } finally { rmSync(dir, { recursive: true, force: true }); }
});

test('bad files: missing, not JSON, a directory', () => {
  const dir = mkdtempSync(join(tmpdir(), 'luna-dist-'));
  try {
    assert.throws(() => readDistribution(join(dir, 'none.json')), /none\.json: no such file \(luna balance TRACE -o FILE writes one\)/);
    writeFileSync(join(dir, 'bad.json'), '{"format": ');
    assert.throws(() => readDistribution(join(dir, 'bad.json')), /bad\.json: not valid JSON/);
    assert.throws(() => readDistribution(dir), /is a directory, not a distribution file/);
  } finally { rmSync(dir, { recursive: true, force: true }); }
});

test('bad files: not a distribution, another version', () => {
  refuses([1, 2], /not a luna-ts distribution \(expected a JSON object, got array\)/);
  refuses({ ...dist(), format: 'luna-ts-schedule' }, /field "format" is "luna-ts-schedule", expected "luna-ts-distribution"/);
  refuses({ ...dist(), version: 7 }, /distribution version 7 is not supported \(this luna-ts reads version 1\)/);
});

test('bad files: a header field missing or of the wrong kind is named', () => {
  const { nodes: _n, ...noNodes } = dist();
  refuses(noNodes, /field "nodes": expected number, got nothing \(the field is missing\)/);
  refuses({ ...dist(), nodes: 0 }, /field "nodes": .*got 0/);
  refuses({ ...dist(), nodes: 1.5 }, /field "nodes": .*got the number 1\.5/);
  refuses({ ...dist(), decision: 'maybe' }, /field "decision": .*got "maybe"/);
  refuses({ ...dist(), cfs: [] }, /field "cfs": expected object, got array/);
  refuses({ ...dist(), args: 'x' }, /field "args": .*got "x"/);
});

test('bad files: an entry with a key that is not an identity, or a node out of range, is named', () => {
  refuses({ ...dist(), cfs: { 'init[3]': 1 } }, /entry cfs\["init\[3\]"\]: the key is not a CF global id such as 3_5_0/);
  refuses({ ...dist(), cfs: { '3_1_0': 2 } }, /entry cfs\["3_1_0"\]: the node must be a whole number from 0 to 1 \(field "nodes" is 2\), got 2/);
  refuses({ ...dist(), cfs: { '3_1_0': -1 } }, /entry cfs\["3_1_0"\]: .*got -1/);
  refuses({ ...dist(), cfs: { '3_1_0': '1' } }, /entry cfs\["3_1_0"\]: .*got "1"/);
  refuses({ ...dist(), cfs: { '3_1_0': 0.5 } }, /entry cfs\["3_1_0"\]: .*got the number 0\.5/);
  refuses({ ...dist(), dfs: { 'x[1]': 0 } }, /entry dfs\["x\[1\]"\]: the key is not a DF key such as A#3_5\.1\.2/);
  refuses({ ...dist(), dfs: { 'x#1': null } }, /entry dfs\["x#1"\]: .*got null/);
});

test('a file for more nodes than the run has is refused, saying so; one that places nothing beyond applies', () => {
  const d = dist({ nodes: 4, cfs: { '3_1_0': 3 } });
  assert.match(unfitFor(d, 2, 'd.json')!, /d\.json places fragments on 4 nodes \(up to node 3\); this run has 2: run on 4 nodes, or balance for 2 \(luna balance TRACE --nodes 2\)/);
  assert.equal(unfitFor(dist({ nodes: 4, cfs: { '3_1_0': 1 }, dfs: {} }), 2, 'd.json'), undefined);
  assert.equal(unfitFor(dist(), 3, 'd.json'), undefined, 'fewer nodes than the run: fine');
});

test('merging: the earlier files\' entries with the latest on top; files of more nodes are refused', () => {
  const a = dist({ cfs: { '3_1_0': 1, '3_2_0': 1 }, dfs: {} });
  const b = dist({ cfs: { '3_2_0': 0, '3_3_0': 1 }, dfs: { 'x#3_3': 1 } });
  const m = mergeDistributions([{ d: a, path: 'a.json' }], b);
  assert.deepEqual(m.cfs, { '3_1_0': 1, '3_2_0': 0, '3_3_0': 1 });
  assert.deepEqual(m.dfs, { 'x#3_3': 1 });
  assert.deepEqual(m.made.merged, ['a.json']);
  assert.throws(() => mergeDistributions([{ d: dist({ nodes: 4 }), path: 'big.json' }], b), /big\.json: made for 4 nodes, the new distribution for 2/);
});

function view(gid: string, site: object = { kind: 'call', waits: [] }): FragmentView {
  const memos = new Map<unknown, unknown>();
  return { id: 1, gid, site: site as FragmentView['site'], memo: (s, make) => (memos.has(s) ? memos.get(s) : (memos.set(s, make(view(gid, site))), memos.get(s))) as never };
}

test('the distribution policy: the file\'s CFs and DFs first, the wrapped policy for the rest; placed CFs are not stolen', () => {
  const p = new DistributionPolicy(dist(), new DefaultPolicy());
  assert.equal(p.place(view('3_1_0')), 1);
  assert.equal(p.place(view('3_2_0')), undefined, 'not named: its locator decides');
  assert.equal(p.place(view('3_1_0', { kind: 'for' })), undefined, 'a structured CF is never named');
  assert.equal(p.place(view('3_1_0', { kind: 'call', waits: [{}] })), undefined, 'a CF receiving pushed values stays where its pushers address it');
  assert.equal(p.dfOwner('x#3_1', 0), 1);
  assert.equal(p.dfOwner('y#3_1', 0), 0);
  assert.equal(p.permitSteal(view('3_1_0')), false);
  assert.equal(p.permitSteal(view('3_2_0')), true);
  assert.deepEqual(p.caps, { ...DEFAULT_CAPS, places: true, ownsDfs: true, guardsSteals: true, profiles: true });
  assert.equal(new DistributionPolicy(dist({ dfs: {} }), new DefaultPolicy()).caps.ownsDfs, false, 'no DF entries: owners are never asked');
  assert.equal(p.name, 'distribution + default');
});

test('policies compose by delegation: each answers what it declares, forwards the rest, keeps its own slot', () => {
  const program = compileSource('import c_w(int) as w;\nsub main() { cf a: w(1) @ { priority: 2; }; }', { c_w: () => {} });
  const c = choosePolicy({ program, rank: 0, distribution: dist(), record: true });
  assert.equal(c.policy, c.recorder, 'the recorder is outermost');
  assert.equal(c.recorder!.inner, c.distribution);
  assert.equal(c.policy.name, 'distribution + priority', 'the program\'s priority rules under the distribution');
  assert.equal(c.policy.caps.orders, true);
  assert.equal(c.policy.caps.places, true);
  assert.equal(c.policy.place(view('3_1_0')), 1, 'asked through the recorder');
  assert.equal(choosePolicy({ program: compileSource('import c_w(int) as w;\nsub main() { w(1); }', { c_w: () => {} }), rank: 0 }).policy.name, 'default');
  // two policies keeping something per fragment do not see each other's
  const a = new FragmentSlot<string>('a'), b = new FragmentSlot<string>('b');
  class Keeps extends ForwardingPolicy {
    constructor(inner: DefaultPolicy | Keeps, private readonly slot: FragmentSlot<string>, private readonly v: string) { super(inner); }
    override place(cf: FragmentView): number | undefined { cf.memo(this.slot, () => this.v); return this.inner.place(cf); }
  }
  const seen: string[] = [];
  const outer = new Keeps(new Keeps(new DefaultPolicy(), a, 'inner'), b, 'outer');
  const memos: unknown[] = [];
  const cf = { id: 0, gid: '1', site: { kind: 'call' } as FragmentView['site'], memo<T>(s: FragmentSlot<T>, make: (c: FragmentView) => T): T { const i = memos.indexOf(s); if (i >= 0) return memos[i + 1] as T; const v = make(this); memos.push(s, v); seen.push(String(v)); return v; } };
  outer.place(cf);
  outer.place(cf);
  assert.deepEqual(seen, ['outer', 'inner'], 'made once each, in their own slots');
});

test('a declared capability is asked, an undeclared one is not (a forwarding policy has every method)', async () => {
  const src = 'import c_w(int) as w;\nsub main() { for i = 0..9 cf w[i]: w(i); }';
  let asked = 0;
  class Counts extends ForwardingPolicy {
    override profile(): void { asked++; }
  }
  await runInProcess(src, { c_w: () => {} }, { policy: new Counts(new DefaultPolicy()) });
  assert.equal(asked, 0, 'profiles not declared: never called');
  class Declares extends Counts {
    override readonly caps = { ...DEFAULT_CAPS, profiles: true };
  }
  const r = await runInProcess(src, { c_w: () => {} }, { policy: new Declares(new DefaultPolicy()) });
  assert.equal(r.ok, true, r.message);
  assert.equal(asked, 10);
});

test('a distribution places CFs through the placement policy on 2 in-process nodes: spread loops spawn them where it says (no migration), values cross correctly, placed stealable CFs stay', async () => {
  const n = 32;
  // the statements of main are 0 (the w/r loop) and 1 (the s loop): w[i] is 0_i_0, s[i] is 1_i_0
  const cfs: Record<string, number> = {}, dfs: Record<string, number> = {};
  for (let i = 0; i < n; i++) { cfs[`0_${i}_0`] = (i + 1) % 2; dfs[`t#0_${i}`] = (i + 1) % 2; }
  for (let i = 0; i < n / 2; i++) cfs[`1_${i}_0`] = 0;
  const d = dist({ program: 'test.fa', cfs, dfs });
  const out: string[] = [];
  const moved: string[] = [];
  const ucodes = (node: number) => ({
    c_put: (i: number, t: { setInt(v: number): void }) => { t.setInt(10 * i); out.push(`w ${i} @${node}`); },
    c_show: (i: number, t: { getInt(): number }) => { out.push(`r ${i} = ${t.getInt()} @${node}`); },
    c_busy: (i: number, ms: number) => { const end = performance.now() + ms; while (performance.now() < end) { /* busy */ } out.push(`s ${i} @${node}`); },
  });
  const r = await runInProcess(PLACES, ucodes, {
    nodes: 2, args: [String(n), '1'],
    policy: () => new DistributionPolicy(d, new DefaultPolicy()),
    observe: (rt) => {
      const receive = rt.receiveCf.bind(rt);
      rt.receiveCf = (cf, from, id) => { moved.push(cf.gid); receive(cf, from, id); };
    },
  });
  assert.equal(r.ok, true, r.message);
  const at = (tag: string) => new Map(out.map((l) => new RegExp(`^${tag} (\\d+)(?: = -?\\d+)? @(\\d)$`).exec(l)).filter((x) => x !== null).map((x) => [Number(x![1]), Number(x![2])]));
  const w = at('w'), s = at('s');
  assert.equal(w.size, n, out.join('\n'));
  for (let i = 0; i < n; i++) assert.equal(w.get(i), (i + 1) % 2, `w[${i}] runs where the file says, not where its locator does`);
  for (let i = 0; i < n; i++) assert.ok(out.includes(`r ${i} = ${10 * i} @${(i + 1) % 2}`), `r[${i}] reads its value where its locator says\n${out.join('\n')}`);
  assert.equal(s.size, n);
  for (let i = 0; i < n / 2; i++) assert.equal(s.get(i), 0, `s[${i}] is placed by the file: never stolen`);
  assert.deepEqual(moved.filter((g) => /^0_\d+_0$/.test(g)), [], 'the spread loop spawned every w[i] on its node');
  // without the file the same program runs w[i] where its locator says
  out.length = 0;
  const plain = await runInProcess(PLACES, ucodes, { nodes: 2, args: [String(n), '1'] });
  assert.equal(plain.ok, true, plain.message);
  const w0 = at('w');
  for (let i = 0; i < n; i++) assert.equal(w0.get(i), i % 2, `w[${i}] without a file: its locator`);
});
