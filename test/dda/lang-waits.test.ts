// The language's global_count and rearrange are asked by the system thread (no worker waits for
// them), yet the time their CF waits for the array — for a block another CF holds — is the W of
// SLOW, as a ucode's wait through the request port is: the asked CF sits on an idle lane's
// timeline from its request (or the lane's last CF) to its answer, with a `descriptor` wait
// record naming the array inside it. Run for real: worker threads, 1 and 2 nodes in this process
// (two over TCP), and 2 node processes through the CLI with `luna analyze slow`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readTrace } from '../../src/trace/merge.js';
import { WAIT_KINDS, type TraceEvent } from '../../src/trace/schema.js';
import { dynamicArrays } from '../../src/runtime/dda/index.js';
import { analyzeSlowTrace } from '../../src/analysis/slow/index.js';
import { fixture, runWithResource } from '../ucode/fixtures.js';
import { DefaultPolicy } from '../../src/runtime/policy/default.js';
import { ForwardingPolicy } from '../../src/runtime/policy/forward.js';
import type { FragmentView, LanesView } from '../../src/runtime/policy/types.js';
import type { CallSite } from '../../src/program/compile.js';

// f1 holds the last node's block while the count is asked (its trigger g comes from a CF that
// ends once f1 holds the block, seen through a marker file, and well inside the hold); f2 holds
// it while the rearrangement is asked. A plain nap of fixed length raced f1's start on a loaded
// machine (the count then ran before f1 and saw 0 elements). The triggers must run beside the
// fills, which the dataflow does not say: on 2 nodes they run on node 0 and the fills on node 1;
// on one node the test's policy gives them a lane of their own. (On a shared lane a trigger
// queued ahead of its fill waited for its marker in vain: "count 40, moved 40" under load.)
const PROGRAM = `
import c_after(int \`n, int \`ms, name \`done) as after;
import c_fill(block \`P, int \`n, int \`ms, name \`done) as fill;
import c_check(value \`count, value \`moved, value \`a, value \`b) as check;

sub main(int nodes)
{
    df g, a, count, g2, b, moved;
    dynamic P(16) @ { capacity: 64; };
    cf f1: fill(P, 40, 600, a) @ { locator_cyclic: nodes - 1; };
    cf n1: after(40, 50, g) @ { locator_cyclic: 0; };
    global_count(P, count) @ { request g; };
    cf f2: fill(P, 10, 600, b) @ { locator_cyclic: nodes - 1; request count; };
    cf n2: after(10, 50, g2) @ { locator_cyclic: 0; request count; };
    rearrange(P, 0, nodes - 1, moved) @ { request g2; };
    cf c: check(count, moved, a, b) @ { locator_cyclic: 0; };
}
`;

/** The ucodes; `marks`: the directory where a fill marks that it holds the block. */
const ucodes = (marks: string): string => `
import { existsSync, writeFileSync } from 'node:fs';
const MARKS = ${JSON.stringify(marks)};
const sleep = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
/** once the fill of n elements holds its block (or after 60 s), ms more */
export function c_after(n, ms, done) {
  for (let i = 0; i < 12000 && !existsSync(MARKS + '/held-' + n); i++) sleep(5);
  sleep(ms);
  done.setInt(ms);
}
/** n elements (id, 3 id + 1), the block held for ms */
export function c_fill(P, n, ms, done) {
  if (P.getMaxNumel() - P.getNumel() < n) P.resize((P.getNumel() + n) * P.getElsize());
  const at = P.getNumel();
  const v = P.addElement(n);
  const f = new Float64Array(v.buffer, v.byteOffset, 2 * n);
  for (let i = 0; i < n; i++) { f[2 * i] = at + i; f[2 * i + 1] = 3 * (at + i) + 1; }
  writeFileSync(MARKS + '/held-' + n, '');
  sleep(ms);
  done.setInt(P.getNumel());
}
export function c_check(count, moved, a, b) {
  if (count.getInt() !== 40 || moved.getInt() !== 50) throw new Error('count ' + count.getInt() + ', moved ' + moved.getInt());
  console.log('lang-waits: OK');
}
`;

/** A fixture with the program and ucodes whose marks go to a directory of its own. */
function programFixture(t: { after(fn: () => void): void }): string {
  const dir = fixture(t, { 'prog.fa': PROGRAM, 'marks/.keep': '' });
  writeFileSync(join(dir, 'ucodes.ts'), ucodes(join(dir, 'marks')));
  return dir;
}

/**
 * The default policy, but a batch of the triggers (`after`) goes to the last lane and any other
 * to lane 0, one CF a batch: a trigger never waits behind the fill whose marker it waits for.
 */
class TriggersApart extends ForwardingPolicy {
  constructor() { super(new DefaultPolicy()); }
  override chooseLane(lanes: LanesView, next?: FragmentView): number {
    const site = next?.site;
    return site?.kind === 'call' && (site as CallSite).imp.alias === 'after' ? lanes.count - 1 : 0;
  }
  override batchSize(): number { return 1; }
}

type Ev<K extends TraceEvent['kind']> = Extract<TraceEvent, { kind: K }>;

const COUNT = 'the global count of dynamic array P';
const REARRANGE = 'a rearrangement of dynamic array P';

/**
 * The asked CFs' waits in a trace: each inside the run of the CF it names, on one lane, with no
 * other CF on that lane meanwhile (the lane did nothing else).
 */
function askedWaits(events: TraceEvent[], resource: string): Ev<'wait'>[] {
  const ws = events.filter((e): e is Ev<'wait'> => e.kind === 'wait' && e.resource === resource);
  const starts = events.filter((e): e is Ev<'cfStart'> => e.kind === 'cfStart');
  const fins = events.filter((e): e is Ev<'cfFinish'> => e.kind === 'cfFinish');
  for (const w of ws) {
    assert.equal(WAIT_KINDS[w.waitKind], 'descriptor');
    assert.equal(w.thread, 0, 'written by the system thread, which asked');
    const s = starts.find((e) => e.node === w.node && e.cf === w.cf)!, f = fins.find((e) => e.node === w.node && e.cf === w.cf)!;
    assert.ok(s && f, `the wait for ${resource} names a CF that ran`);
    assert.ok(s.t <= w.t && w.end <= f.t, `wait [${w.t}, ${w.end}] inside its CF [${s.t}, ${f.t}]`);
    // no other CF ran on that lane of that node during the wait
    for (const o of starts) {
      if (o.node !== w.node || o.lane !== s.lane || o.cf === w.cf) continue;
      const of = fins.find((e) => e.node === o.node && e.cf === o.cf && e.lane === o.lane);
      const end = of?.t ?? Infinity;
      assert.ok(end <= w.t || o.t >= w.end, `CF ${o.cf} ran on lane ${o.lane} [${o.t}, ${end}] during the wait [${w.t}, ${w.end}]`);
    }
  }
  return ws;
}

for (const nodes of [1, 2]) {
  test(`the language's count and rearrange, asked by the system thread, wait for a held block as W naming the array, ${nodes} node(s) × 2 threads in process`, async (t) => {
    const dir = programFixture(t);
    const layer = dynamicArrays();
    const ran = await runWithResource(dir, { nodes, threads: 2, args: [String(nodes)], traced: true, layers: [layer], ...(nodes === 1 ? { policy: () => new TriggersApart() } : {}) });
    for (const r of ran.results) assert.equal(r.ok, true, r.message);
    assert.deepEqual(layer.nodes.map((d) => d.block('P').getNumel()).reduce((x, y) => x + y, 0), 50);

    const events = [...readTrace(ran.trace!).events];
    // the count waited for f1's block: its CF carries the wait
    const counted = askedWaits(events, COUNT);
    const moved = askedWaits(events, REARRANGE);
    assert.equal(counted.length, 1, 'the count waited, once');
    assert.equal(moved.length, 1, 'the rearrangement waited, once');
    // no worker thread waited for either
    assert.ok(events.every((e) => e.kind !== 'wait' || e.thread === 0 || (e.resource !== COUNT && e.resource !== REARRANGE)));

    const slow = analyzeSlowTrace(ran.trace!);
    assert.equal(slow.damage.total, 0, JSON.stringify(slow.damage.examples));
    const W = slow.perThread.reduce((s, x) => s + x.W, 0);
    const booked = [...counted, ...moved].reduce((s, w) => s + (w.end - w.t), 0);
    assert.ok(booked > 0 && W >= 0.99 * booked, `SLOW books the asked CFs' waits as W: ${W} of ${booked} ns`);
    const byResource = new Map(slow.blame.waiting.byResource.map((r) => [r.key, r.ns]));
    assert.ok((byResource.get(`descriptor ${COUNT}`) ?? 0) > 0, [...byResource.keys()].join('; '));
    assert.ok((byResource.get(`descriptor ${REARRANGE}`) ?? 0) > 0, [...byResource.keys()].join('; '));
  });
}

test('2 node processes: luna analyze slow shows the count\'s and the rearrangement\'s waits as W, naming the array', (t) => {
  const dir = programFixture(t);
  const trace = join(dir, 'trace');
  const run = spawnSync(process.execPath, ['bin/luna', 'run', '--nodes', '2', '--threads', '2', '--trace', trace, join(dir, 'prog.fa'), '2'], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
  assert.match(run.stdout, /lang-waits: OK/);
  const an = spawnSync(process.execPath, ['bin/luna', 'analyze', 'slow', trace, '--json'], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(an.status, 0, `${an.stdout}\n${an.stderr}`);
  const slow = JSON.parse(an.stdout) as { t: { W: number }; blame: { waiting: { byResource: { key: string; ns: number }[] } } };
  assert.ok(slow.t.W > 0, `W ${slow.t.W}`);
  const keys = slow.blame.waiting.byResource.map((r) => r.key);
  assert.ok(keys.includes(`descriptor ${COUNT}`), keys.join('; '));
  assert.ok(keys.includes(`descriptor ${REARRANGE}`), keys.join('; '));
});
