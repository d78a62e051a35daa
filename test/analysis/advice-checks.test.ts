// Every recommendation is checked against the run it speaks of: a suggested rule compiles for the
// family it names (the real compiler, on a program declaring that family with as many indices);
// an option is offered only when a replay of the run's graph predicts a gain; the fragment size is
// never advised both ways in one list (the dominant factor decides); an idle worker is told apart
// as start-up or batching; and the starvation of an idle worker is in the blame, not lost.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeSlow, formatSlowTable, interpretFindings, RULE, type SlowReport } from '../../src/analysis/slow/index.js';
import { RunGraph, replay } from '../../src/analysis/sim/run-graph.js';
import { compileFrontEnd } from '../../src/lang/index.js';
import { simulate } from '../../src/analysis/sim/simulate.js';
import { TB, chainAroundThreads, manifest, sideThenChain } from './tb.js';

const kinds = (r: SlowReport): string[] => interpretFindings(r).map((f) => f.kind);
const textOf = (r: SlowReport, kind: string): string => interpretFindings(r).filter((f) => f.kind === kind).map((f) => f.text).join('\n');

/** Two nodes, each CF reading a DF of the other node made of 2 indices (`B[i][0]`): latency on a two-index family. */
function latency2d(): SlowReport {
  const tb = new TB(2);
  let t = 0;
  for (let i = 0; i < 10; i++) {
    for (const [chain, node] of [['B', i % 2], ['C', 1 - (i % 2)]] as const) {
      const cf = 2 * i + (chain === 'B' ? 1 : 2);
      tb.cf({ node, thread: 1, cf, label: 'step', start: t, end: t + 10, inputs: i > 0 ? [`${chain}[${i - 1}][0]`] : [] });
      tb.computed(node, `${chain}[${i}][0]`, cf, t + 10);
      tb.transfer(`${chain}[${i}][0]`, node, 1 - node, t + 11, t + 1100);
    }
    t += 1100;
  }
  return analyzeSlow(manifest(2, 1), tb.done(t));
}

/** Two nodes, all work on node 0, its CFs producing `A[i][j]` read by a final CF. */
function idleNode2d(): SlowReport {
  const tb = new TB(2);
  const ins: string[] = [];
  for (let i = 0; i < 8; i++) {
    tb.cf({ node: 0, thread: 1, cf: i + 1, label: 'work', start: i * 100, end: i * 100 + 100 });
    tb.computed(0, `A[${i}][1]`, i + 1, i * 100 + 100);
    ins.push(`A[${i}][1]`);
  }
  tb.cf({ node: 0, thread: 1, cf: 20, label: 'sum', start: 800, end: 810, inputs: ins });
  return analyzeSlow(manifest(2, 1), tb.done(810));
}

/** A program declaring every family the report knows with its number of indices, and `rule` where it goes. */
function programWith(rule: string, r: SlowReport): string {
  const fams = new Map(r.families.map((f) => [f.family, f.indices]));
  if (!fams.has('X')) fams.set('X', 1);
  const decl = [...fams.keys()].join(', ');
  const ref = (f: string): string => `${f}${'[e]'.repeat(fams.get(f)!)}`;
  const calls = [...fams.keys()].map((f) => `        set(1, ${ref(f)});`).join('\n');
  // a statement rule goes on a CF (with `e` its index), a map rule in the block declaring the family
  const own = /^[a-z_]+:/.test(rule);
  return `import c_set(int \`v, name \`x) as set;
sub main()
{
    df ${decl};
    for e = 0..3 {
${calls}
        cf w[e]: set(e, X${'[e]'.repeat(fams.get('X')!)}) ${own ? `@ { ${rule} }` : ''};
    }
} ${own ? '' : `@ { ${rule} }`}
`;
}

function compiles(rule: string, r: SlowReport): string[] {
  const res = compileFrontEnd('advice.fa', { source: programWith(rule, r) });
  return res.diagnostics.filter((d) => d.severity === 'error').map((d) => `${d.code}: ${d.message}`);
}

test('a suggested rule compiles for the family it names: one binder per index, checked by the real compiler', () => {
  const rules = new Set(Object.values(RULE));
  let checked = 0;
  for (const r of [latency2d(), idleNode2d()]) {
    assert.ok(r.families.some((f) => f.indices === 2), JSON.stringify(r.families));
    for (const f of interpretFindings(r)) {
      for (const [, quoted] of f.text.matchAll(/`([^`]+)`/g)) {
        const word = /^[a-z_]+/.exec(quoted!)?.[0];
        if (!word || !rules.has(word as never) || !quoted!.endsWith(';')) continue;
        assert.deepEqual(compiles(quoted!, r), [], `${f.kind}: ${quoted} does not compile:\n${programWith(quoted!, r)}`);
        checked++;
      }
    }
  }
  assert.ok(checked >= 5, `${checked} rules compiled`);
  assert.match(textOf(latency2d(), 'latency'), /`locator_cyclic B\[i\]\[j\] => i;`/);
  assert.match(textOf(latency2d(), 'latency'), /`locator_replicating B\[i\]\[j\] => all;`/);
  assert.match(textOf(idleNode2d(), 'idle-nodes'), /`locator_cyclic A\[i\]\[j\] => i;`/);
  // the check has teeth: the one-index rule the advice used to give does not compile for B[i][j]
  assert.match(compiles('locator_cyclic B[i] => i;', latency2d()).join(), /LUNA-E018/);
});

/** Side CFs ran first on both lanes while a chain that could have started at once waited: order matters. */
function sideFirst(): SlowReport {
  const tb = new TB(1);
  const t = sideThenChain(tb);
  return analyzeSlow(manifest(1, 2), tb.done(t));
}

/** Independent CFs on both lanes, then one final CF reading them all: no order can shorten it. */
function finalJoin(): SlowReport {
  const tb = new TB(1);
  const ins: string[] = [];
  for (let i = 0; i < 10; i++) {
    const start = Math.floor(i / 2) * 100;
    tb.cf({ node: 0, thread: 1 + (i % 2), cf: i + 1, label: 'part', start, end: start + 100 });
    tb.computed(0, `x[${i}]`, i + 1, start + 100);
    ins.push(`x[${i}]`);
  }
  tb.cf({ node: 0, thread: 1, cf: 50, label: 'join', start: 500, end: 800, inputs: ins });
  return analyzeSlow(manifest(1, 2), tb.done(800));
}

test('--priorities-from is offered only when a replay of the run in critical-path order is predicted to gain', () => {
  const gains = sideFirst();
  assert.ok(gains.predictions, gains.predictionsSkipped);
  assert.ok(gains.predictions.criticalOrderNs < 0.95 * gains.predictions.baselineNs, JSON.stringify(gains.predictions));
  const t = textOf(gains, 'order');
  assert.match(t, /`luna run --priorities-from TRACE`/);
  assert.match(t, /simulating this run's graph in that order predicts [0-9.]+ µs against [0-9.]+ µs in the run's order \(\d+% shorter\)/);
  // the path ends in one final CF: every order takes as long, the option is not offered
  const join = finalJoin();
  assert.ok(join.p.S >= 10, `S ${join.p.S}`);
  assert.ok(join.predictions, join.predictionsSkipped);
  assert.equal(join.predictions.criticalOrderNs, join.predictions.baselineNs);
  assert.ok(!kinds(join).includes('order'), kinds(join).join());
  for (const f of interpretFindings(join)) assert.doesNotMatch(f.text, /--priorities-from/);
});

test('the replay: list scheduling on the nodes\' lanes, in the run\'s order or critical-path first, with transfer latencies', () => {
  const g = new RunGraph(1, 1);
  // a (10) and b (10) ready at 0; c (100) after a; d (100) after b; run order a, b, c, d
  const a = g.add(0, 10, 10, 0, [], []), b = g.add(0, 10, 10, 0, [], []);
  g.add(0, 100, 100, 0, [a], [0]); g.add(0, 100, 100, 0, [b], [0]);
  assert.equal(replay(g, 'run'), 220);
  assert.equal(replay(g, 'run', 1), 220);
  const two = new RunGraph(1, 2);
  const x = two.add(0, 10, 10, 0, [], []);
  two.add(0, 50, 50, 0, [x], [0]); two.add(0, 50, 50, 0, [x], [0]);
  assert.equal(replay(two, 'run'), 60, 'two lanes run the consumers side by side');
  assert.equal(replay(two, 'run', 1), 110);
  // across nodes: the consumer waits for the transfer
  const net = new RunGraph(2, 1);
  const p = net.add(0, 10, 10, 0, [], []);
  net.add(1, 10, 10, 0, [p], [25]);
  assert.equal(replay(net, 'run'), 45);
  // critical-path order: the long chain first
  const order = new RunGraph(1, 1);
  order.add(0, 10, 10, 0, [], []); // a short side CF, ready first
  const h = order.add(0, 10, 10, 0, [], []);
  order.add(0, 100, 100, 0, [h], [0]);
  assert.equal(replay(order, 'run'), 120);
  assert.equal(replay(order, 'critical'), 120, 'one lane: the same total either way');
});

test('fewer threads are suggested only when the replay loses nothing by them', () => {
  const tb = new TB(1);
  const t = chainAroundThreads(tb);
  const chain = analyzeSlow(manifest(1, 4), tb.done(t));
  const seq = textOf(chain, 'sequential');
  assert.match(seq, /`--threads 1` \(simulating this run's graph predicts [0-9.]+ µs with 1 against [0-9.]+ µs with 4: as fast, with CPUs to spare\)/);
  // a wide graph: fewer threads would lose, so they are not offered
  const wide = new TB(1);
  for (let i = 0; i < 40; i++) wide.cf({ node: 0, thread: 1 + (i % 4), cf: i + 1, label: 'w', start: Math.floor(i / 4) * 100, end: Math.floor(i / 4) * 100 + 100 });
  const w = analyzeSlow(manifest(1, 4), wide.done(1000));
  assert.ok(w.predictions === null || w.predictions.threads.every((x) => x.ns > w.predictions!.baselineNs));
  for (const f of interpretFindings(w)) assert.doesNotMatch(f.text, /--threads [123]\b/, f.text);
});

/** `r` with its overhead made large per CF and the shares of O and L set: both fragment-size advices apply. */
function both(r: SlowReport, O: number, L: number): SlowReport {
  return { ...r, p: { ...r.p, O, L, S: 0 }, overhead: { ...r.overhead, startDelay: 50 * r.cfs * r.meanCfNs, startup: 0 }, machines: [] };
}

test('the fragment size is advised one way only: the factor that loses more decides', () => {
  const base = latency2d();
  const finer = /fragment finer|into more fragments|more, smaller CFs|Split the work/;
  const larger = /make CFs larger/;
  const over = both(base, 50, 30);
  const a = interpretFindings(over).map((f) => f.text).join('\n');
  assert.match(a, larger);
  assert.doesNotMatch(a, finer);
  assert.match(textOf(over, 'latency'), /Not finer fragments: overhead per CF dominates \(P_O = 50\.0% against P_L = 30\.0%\)/);
  const lat = both(base, 20, 50);
  const b = interpretFindings(lat).map((f) => f.text).join('\n');
  assert.match(b, finer);
  assert.doesNotMatch(b, larger);
  assert.ok(!kinds(lat).includes('fine-grained'), kinds(lat).join());
  assert.match(textOf(lat, 'overhead'), /should not be made larger: latency dominates/);
  // and never both, in any simulated run
  for (let seed = 1; seed <= 40; seed++) {
    const sim = simulate({ seed, nodes: 1 + (seed % 3), threads: 1 + (seed % 4), cfs: 30 + seed * 3, hopProb: 0.3, migrateProb: 0.3 });
    const text = interpretFindings(analyzeSlow(sim.manifest, sim.events)).map((f) => f.text).join('\n');
    assert.ok(!(finer.test(text) && larger.test(text)), `seed ${seed}: both ways:\n${text}`);
  }
});

test('an idle worker: start-up when the others got going late in a short run, batching when they were up', () => {
  // lane 1 starts its first CF 40% into the run, lane 2 never: still booting
  const late = new TB(1);
  for (let i = 0; i < 6; i++) late.cf({ node: 0, thread: 1, cf: i + 1, label: 'w', start: 400 + i * 100, end: 500 + i * 100 });
  const boot = analyzeSlow(manifest(1, 2), late.done(1000));
  assert.equal(boot.placement.startupNs, 400);
  const t = textOf(boot, 'idle-threads');
  assert.match(t, /the workers that did run started their first fragment only up to 400 ns after its start/);
  assert.match(t, /start-up, not the program or its batching/);
  assert.match(t, /`--warm-start`/);
  assert.doesNotMatch(t, /batches/);
  // lane 1 starts at once and runs a wide batch: lane 2 idles although booted — batching
  const early = new TB(1);
  for (let i = 0; i < 10; i++) early.cf({ node: 0, thread: 1, cf: i + 1, label: 'w', start: i * 100, end: i * 100 + 100 });
  const batch = analyzeSlow(manifest(1, 2), early.done(1000));
  assert.match(textOf(batch, 'idle-threads'), /handed the CFs to the other workers in batches and chains/);
  assert.doesNotMatch(textOf(batch, 'idle-threads'), /--warm-start/);
});

test('a worker idle the whole run: its starvation is in the blame, which is never empty while S is high', () => {
  const tb = new TB(1);
  for (let i = 0; i < 10; i++) tb.cf({ node: 0, thread: 1, cf: i + 1, label: 'w', start: i * 100, end: i * 100 + 100 });
  const r = analyzeSlow(manifest(1, 2), tb.done(1000));
  assert.equal(r.p.S, 50);
  assert.equal(r.blame.starvation.total, 0, 'no producer ended it');
  assert.deepEqual(r.blame.starvation.other, [{ key: 'worker threads that ran no fragment', ns: 1000, share: 1 }]);
  assert.match(formatSlowTable(r), /starvation no producer ended: worker threads that ran no fragment 1\.0 µs \(100% of S\)/);
});

test('one node, every worker busy, the last one started late: the advice names the heavy mark; not when it started early', () => {
  const late = new TB(1);
  for (let i = 0; i < 9; i++) late.cf({ node: 0, thread: 1, cf: i + 1, label: 'w', start: i * 100, end: i * 100 + 100 });
  late.cf({ node: 0, thread: 2, cf: 20, label: 'w', start: 200, end: 1000 });
  const r = analyzeSlow(manifest(1, 2), late.done(1000));
  assert.equal(r.placement.startupNs, 200);
  const t = textOf(r, 'late-start');
  assert.match(t, /started its first fragment 200 ns into the run \(20 ?% of T_wall\)/);
  assert.match(t, /mark them `heavy`/);
  const early = new TB(1);
  for (let i = 0; i < 10; i++) early.cf({ node: 0, thread: 1, cf: i + 1, label: 'w', start: i * 100, end: i * 100 + 100 });
  early.cf({ node: 0, thread: 2, cf: 20, label: 'w', start: 10, end: 1000 });
  assert.ok(!interpretFindings(analyzeSlow(manifest(1, 2), early.done(1000))).some((f) => f.kind === 'late-start'), 'started at 1 % of the run: no word');
});

test('pre-emption: one worker fewer is advised only when the useful work spread over the rest fits in the run', () => {
  // one node, two lanes on two CPUs, every CF running longer than its CPU time
  const run = (cpu: number): SlowReport => {
    const tb = new TB(1);
    let cf = 1;
    for (let lane = 1; lane <= 2; lane++) for (let i = 0; i < 10; i++) tb.cf({ node: 0, thread: lane, cf: cf++, label: 'work', start: i * 100, end: i * 100 + 100, cpu });
    return analyzeSlow({ ...manifest(1, 2), machines: [{ host: 'box', cores: 2, nodes: [0] }] }, tb.done(1000));
  };
  // 2 × 10 CFs of 80 ns of CPU: on one lane their work alone takes 1 600 ns, against 1 000 now
  const busy = textOf(run(80), 'preemption');
  assert.match(busy, /Fewer worker threads would not pay here: on 1 a node the CFs' useful work alone takes at least 1\.6 µs, against this run's 1(\.0)? µs/, busy);
  assert.doesNotMatch(busy, /--threads/, busy);
  // 20 ns each: 400 ns on one lane, well inside the run
  const light = textOf(run(20), 'preemption');
  assert.match(light, /leave a CPU to the runtime \(`--threads 1`\) so CFs run undisturbed \(on 1 a node the CFs' useful work alone takes at least 400 ns, against this run's 1(\.0)? µs\)/, light);
});
