// Findings of the interpretation on hand-made traces: nodes and worker threads that ran nothing,
// oversubscribed machines, start-up, the dynamics by window, the model rows, the units.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeSlow, formatSlowTable, interpretFindings, unitOf, type SlowReport } from '../../src/analysis/slow/index.js';
import type { MachineInfo } from '../../src/trace/manifest.js';
import { TB, manifest } from './tb.js';

const kinds = (r: SlowReport): string[] => interpretFindings(r).map((f) => f.kind);
const textOf = (r: SlowReport, kind: string): string => interpretFindings(r).filter((f) => f.kind === kind).map((f) => f.text).join('\n');

/** `n` independent CFs of `us` µs on node 0, spread over its `threads` lanes. */
function independentOnNode0(nodes: number, threads: number, n: number, ns: number): { tb: TB; end: number } {
  const tb = new TB(nodes);
  const free = new Array<number>(threads).fill(0);
  for (let i = 0; i < n; i++) {
    const lane = free.indexOf(Math.min(...free));
    tb.cf({ node: 0, thread: lane + 1, cf: i + 1, label: 'work', start: free[lane]!, end: free[lane]! + ns });
    free[lane]! += ns;
  }
  return { tb, end: Math.max(...free) };
}

test('a node that ran no fragment is its own finding: names the node and the placement rules, not the data split', () => {
  const { tb, end } = independentOnNode0(3, 2, 40, 1000);
  const r = analyzeSlow(manifest(3, 2), tb.done(end));
  assert.deepEqual(r.placement.idleNodes, [1, 2]);
  assert.deepEqual(r.placement.perNode, [40, 0, 0]);
  assert.deepEqual(r.placement.idleThreads, [], 'lanes of idle nodes are not listed again as idle threads');
  assert.equal(r.placement.idleNs, 4 * end, 'the four idle workers starved the whole run');
  const k = kinds(r);
  assert.ok(k.includes('idle-nodes'), k.join());
  assert.ok(k.indexOf('idle-nodes') < k.indexOf('summary') + 2, 'right after the summary');
  const t = textOf(r, 'idle-nodes');
  assert.match(t, /^Nodes 1 and 2 ran no fragment: all 40 CFs ran on node 0/);
  assert.match(t, /`locator_cyclic: e;`/);
  assert.match(t, /`stealable`/);
  assert.match(t, /here `work`: 40 CFs, 100% of the useful work/);
  // the graph is wide (40 independent CFs): no "too sequential", no tail advice for the idle workers
  assert.ok(!k.includes('sequential') && !k.includes('tail'), k.join());
  assert.match(formatSlowTable(r), /CFs per node: 0: 40, 1: 0, 2: 0 {2}\(no fragment on node\(s\) 1, 2\)/);
});

test('nodes that all ran something: no idle-node finding', () => {
  const tb = new TB(2);
  for (let i = 0; i < 10; i++) tb.cf({ node: i % 2, thread: 1, cf: i + 1, label: 'work', start: Math.floor(i / 2) * 100, end: Math.floor(i / 2) * 100 + 100 });
  const r = analyzeSlow(manifest(2, 1), tb.done(500));
  assert.deepEqual(r.placement.idleNodes, []);
  assert.deepEqual(r.placement.perNode, [5, 5]);
  assert.ok(!kinds(r).includes('idle-nodes'));
});

test('a worker thread that never ran a fragment is a parallelism finding, not a tail', () => {
  // one chain of 20 CFs, all on lane 1 of 2
  const tb = new TB(1);
  let t = 0;
  for (let i = 0; i < 20; i++) {
    tb.cf({ node: 0, thread: 1, cf: i + 1, label: 'link', start: t + 5, end: t + 100, inputs: i > 0 ? [`x[${i}]`] : [] });
    tb.computed(0, `x[${i + 1}]`, i + 1, t + 100);
    t += 100;
  }
  const r = analyzeSlow(manifest(1, 2), tb.done(t));
  assert.deepEqual(r.placement.idleThreads, [{ node: 0, thread: 2 }]);
  assert.deepEqual(r.placement.perThread, [20, 0]);
  assert.equal(r.placement.idleNs, t);
  assert.equal(r.starvationTail, t, 'the idle worker is part of the tail figure (kept as before)');
  const k = kinds(r);
  assert.ok(k.includes('idle-threads'), k.join());
  assert.ok(!k.includes('tail'), `an idle worker is not "the tail after workers' last CFs": ${k.join()}`);
  const text = textOf(r, 'idle-threads');
  assert.match(text, /^Worker thread 0\.2 ran no fragment/);
  assert.match(text, /less parallelism than threads/);
  assert.match(text, /1\.0-way parallelism/);
  assert.match(text, /`--threads 1`/);
  assert.match(formatSlowTable(r), /worker threads that ran no fragment: 0\.2/);
});

test('idle worker but a wide graph: the finding says the CFs were handed to the other workers, not "less parallelism"', () => {
  const { tb, end } = independentOnNode0(1, 1, 30, 1000); // 30 independent CFs, all on lane 1 …
  const r = analyzeSlow(manifest(1, 3), tb.done(end)); // … of 3
  assert.equal(r.placement.idleThreads.length, 2);
  const text = textOf(r, 'idle-threads');
  assert.match(text, /^Worker threads 0\.2 and 0\.3 ran no fragment/);
  assert.doesNotMatch(text, /less parallelism than threads/);
  assert.match(text, /30\.0-way parallelism/);
});

/** 2 nodes × 2 lanes, each CF pre-empted for half its wall time, started late by the runtime. */
function busyRun(machines: MachineInfo[] | undefined, cores?: number, launcher?: string, threads = 2): SlowReport {
  const tb = new TB(2);
  let cf = 1;
  for (let node = 0; node < 2; node++) {
    for (let lane = 1; lane <= threads; lane++) {
      for (let i = 0; i < 10; i++) tb.cf({ node, thread: lane, cf: cf++, label: 'work', start: i * 100 + 40, end: i * 100 + 100, cpu: 30 });
    }
  }
  const m = manifest(2, threads);
  return analyzeSlow({ ...m, ...(machines ? { machines } : {}), ...(cores ? { cores } : {}), ...(launcher ? { launcher } : {}) }, tb.done(1000));
}

test('an oversubscribed machine is its own finding and the overhead is not blamed on the fragment size', () => {
  const over = busyRun([{ host: 'box', cores: 2, nodes: [0, 1] }]);
  assert.deepEqual(over.machines, [{ host: 'box', cores: 2, cpus: 2, nodes: [0, 1], nodeCpus: [2, 2], workers: 4, oversubscription: 2 }]);
  const k = kinds(over);
  assert.ok(k.includes('oversubscribed'), k.join());
  assert.ok(!k.includes('fine-grained') && !k.includes('preemption'), k.join());
  const t = textOf(over, 'oversubscribed');
  assert.match(t, /^Machine `box` ran 2 nodes × 2 worker threads = 4 workers \(and 2 system threads\) on 2 CPUs: oversubscribed 2\.0×/);
  assert.match(t, /`--threads 1`/);
  assert.match(formatSlowTable(over), /box: 2 CPU\(s\) for 4 worker\(s\), oversubscribed 2\.0×/);
  // the same run on a machine with enough CPUs: the fragment-size advice is back, no oversubscription
  const fine = busyRun([{ host: 'big', cores: 8, nodes: [0, 1] }]);
  assert.equal(fine.machines[0]!.oversubscription, 0.5);
  assert.ok(!kinds(fine).includes('oversubscribed'));
  assert.ok(kinds(fine).includes('fine-grained'), kinds(fine).join());
  // two machines, one oversubscribed: only that one is named, with its own advice
  const split = busyRun([{ host: 'a', cores: 1, nodes: [0] }, { host: 'b', cores: 4, nodes: [1] }]);
  assert.deepEqual(interpretFindings(split).filter((f) => f.kind === 'oversubscribed').map((f) => f.text.slice(0, 12)), ['Machine `a` ']);
});

test('more nodes than CPUs on a machine: the advice is fewer nodes', () => {
  const r = busyRun([{ host: 'tiny', cores: 1, nodes: [0, 1] }]);
  assert.match(textOf(r, 'oversubscribed'), /Run at most 1 node there \(`--nodes 1` with `--threads 1`\)/);
});

test('under mpirun or srun, fewer ranks per machine are the launcher\'s to choose, not --nodes', () => {
  const mpi = busyRun([{ host: 'tiny', cores: 1, nodes: [0, 1] }], undefined, 'mpirun');
  assert.match(textOf(mpi, 'oversubscribed'), /Run at most 1 node there \(`mpirun --map-by ppr:1:node` with `--threads 1`\)/);
  const slurm = busyRun([{ host: 'tiny', cores: 1, nodes: [0, 1] }], undefined, 'srun');
  assert.match(textOf(slurm, 'oversubscribed'), /`srun --ntasks-per-node=1`/);
  for (const r of [mpi, slurm]) for (const f of interpretFindings(r)) assert.doesNotMatch(f.text, /--nodes/, f.text);
});

test('nodes a launcher bound to one CPU each: counted from all ranks, their own finding with the launcher\'s options', () => {
  // mpirun -np 2 on 2 CPUs binds each rank to a core: the machine has 2 CPUs for 2 workers, each node 1
  const one: MachineInfo[] = [{ host: 'vm', cores: 2, cpus: 2, nodes: [0, 1], nodeCpus: [1, 1] }];
  const r = busyRun(one, undefined, 'mpirun', 1);
  assert.equal(r.machines[0]!.oversubscription, 1);
  const k = kinds(r);
  assert.ok(k.includes('bound') && !k.includes('oversubscribed'), k.join());
  assert.ok(!k.includes('fine-grained') && !k.includes('preemption'), 'the binding, not the fragment size');
  const t = textOf(r, 'bound');
  assert.match(t, /^Nodes 0 and 1 were each bound by mpirun to one CPU of machine `vm`'s 2: each ran 1 worker thread and its system thread there/);
  assert.match(t, /pass `mpirun --bind-to none` \(or `mpirun --map-by slot:PE=2` to give each rank 2 CPUs\)/);
  assert.match(formatSlowTable(r), /vm: 2 CPU\(s\) for 2 worker\(s\), node\(s\) 0, 1 bound to 1 CPU\(s\) each/);
  // srun: --cpus-per-task; a node bound to 4 of 8 CPUs with 2 workers fits and is not named
  assert.match(textOf(busyRun(one, undefined, 'srun', 1), 'bound'), /pass `srun --cpus-per-task=2`/);
  const wide = busyRun([{ host: 'big', cores: 8, cpus: 16, nodes: [0, 1], nodeCpus: [4, 4] }], undefined, 'mpirun');
  assert.ok(!kinds(wide).includes('bound'), kinds(wide).join());
  // more workers than the CPUs a node was bound to: named too
  const narrow = busyRun([{ host: 'big', cores: 4, cpus: 16, nodes: [0, 1], nodeCpus: [2, 2] }], undefined, 'mpirun', 3);
  assert.match(textOf(narrow, 'bound'), /bound by mpirun to 2 CPUs .* each ran 3 worker threads/);
});

test('an older multi-node trace with only node 0\'s cores: where the nodes ran is unknown, no oversubscription is invented', () => {
  const r = busyRun(undefined, 2);
  assert.deepEqual(r.machines, []);
  assert.ok(!kinds(r).includes('oversubscribed'));
  // one node and `cores` alone: that is the machine
  const tb = new TB(1);
  for (let i = 0; i < 4; i++) tb.cf({ node: 0, thread: 1 + (i % 4), cf: i + 1, start: 0, end: 100 });
  const one = analyzeSlow({ ...manifest(1, 4), cores: 2 }, tb.done(100));
  assert.deepEqual(one.machines.map((m) => [m.cores, m.workers]), [[2, 4]]);
});

test('start-up before the first CFs is reported apart and does not make CFs look too small', () => {
  // each lane waits 5000 ns for its first CF (workers booting), then 20 CFs of 100 ns back to back
  const tb = new TB(1);
  let cf = 1;
  for (let lane = 1; lane <= 2; lane++) for (let i = 0; i < 20; i++) tb.cf({ node: 0, thread: lane, cf: cf++, label: 'work', start: 5000 + i * 100, end: 5000 + i * 100 + 100 });
  const r = analyzeSlow(manifest(1, 2), tb.done(7000));
  assert.equal(r.overhead.startup, 2 * 5000);
  const k = kinds(r);
  assert.ok(!k.includes('fine-grained'), k.join());
  assert.match(textOf(r, 'overhead'), /100% of O \(10\.0 µs\) is the start-up before each worker's first CF/);
});

test('--window: the text shows the dynamics, one row per window when the width was given', () => {
  // S on lane 2 for the first half, U on both for the second half
  const tb = new TB(1);
  tb.cf({ node: 0, thread: 1, cf: 1, label: 'a', start: 0, end: 1000 });
  tb.computed(0, 'x[0]', 1, 1000);
  tb.cf({ node: 0, thread: 1, cf: 2, label: 'b', start: 1000, end: 2000, inputs: ['x[0]'] });
  tb.cf({ node: 0, thread: 2, cf: 3, label: 'b', start: 1000, end: 2000, inputs: ['x[0]'] });
  const ev = tb.done(2000);
  const auto = formatSlowTable(analyzeSlow(manifest(1, 2), ev));
  assert.match(auto, /dynamics: \d+ windows of/);
  assert.match(auto, /^ {2}S \|[ ▁▂▃▄▅▆▇█]+\|$/m);
  assert.doesNotMatch(auto, /window from/, 'no table unless a width was asked for');
  for (const [w, rows] of [[500, 4], [250, 8]] as const) {
    const r = analyzeSlow(manifest(1, 2), ev, { windowNs: w });
    assert.equal(r.series.explicit, true);
    const text = formatSlowTable(r);
    const table = text.split('\n').filter((l) => /^ {2}\d+(\.\d+)? (ns|µs)\s/.test(l));
    assert.equal(table.length, rows, text);
    // columns S L O W U. First window: lane 1 busy (U 50 %), lane 2 starving (S 50 %); last window: both busy
    assert.match(table[0]!, /^ {2}0 ns\s+50\.0%\s+0\.0%\s+0\.0%\s+0\.0%\s+50\.0%$/);
    assert.match(table[rows - 1]!, /0\.0%\s+0\.0%\s+0\.0%\s+0\.0%\s+100\.0%$/);
  }
  // the sparklines follow the figures: S high in the first half, zero in the second
  const sLine = formatSlowTable(analyzeSlow(manifest(1, 2), ev, { windowNs: 500 })).split('\n').find((l) => l.startsWith('  S |'))!;
  assert.equal(sLine, '  S |▄▄  |');
});

test('--model litvinov2017 shows only that model; --compare shows both', () => {
  const { tb, end } = independentOnNode0(1, 2, 6, 100);
  const ev = tb.done(end);
  const rowsOf = (text: string) => text.split('\n').filter((l) => /^(kireev2024|litvinov2017) /.test(l)).map((l) => l.split(' ')[0]);
  assert.deepEqual(rowsOf(formatSlowTable(analyzeSlow(manifest(1, 2), ev, { model: 'litvinov2017' }))), ['litvinov2017']);
  assert.deepEqual(rowsOf(formatSlowTable(analyzeSlow(manifest(1, 2), ev))), ['kireev2024']);
  assert.deepEqual(rowsOf(formatSlowTable(analyzeSlow(manifest(1, 2), ev, { compare: true }))).sort(), ['kireev2024', 'litvinov2017']);
  // the JSON keeps both models when they were computed (readers of older output rely on it)
  assert.ok(analyzeSlow(manifest(1, 2), ev, { model: 'litvinov2017' }).models.kireev2024);
});

test('every number in the report has a unit', () => {
  const tb = new TB(2);
  tb.cf({ node: 0, thread: 1, cf: 1, label: 'p', start: 0, end: 100 }).computed(0, 'x[0]', 1, 100).transfer('x[0]', 0, 1, 110, 150);
  tb.cf({ node: 1, thread: 1, cf: 2, label: 'c', start: 160, end: 200, inputs: ['x[0]'] });
  const r = analyzeSlow({ ...manifest(2, 1), machines: [{ host: 'h', cores: 2, nodes: [0, 1] }] }, tb.done(200), { compare: true, windowNs: 50 });
  const missing: string[] = [];
  let numbers = 0;
  const walk = (v: unknown, path: string): void => {
    if (typeof v === 'number') { numbers++; if (!unitOf(path)) missing.push(path); return; }
    if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${path}[${i}]`));
    else if (v && typeof v === 'object' && path !== 'units') for (const [k, x] of Object.entries(v)) walk(x, path ? `${path}.${k}` : k);
  };
  walk(JSON.parse(JSON.stringify(r)), '');
  assert.ok(numbers > 100, `${numbers} numbers walked`);
  assert.deepEqual(missing, []);
  assert.equal(r.units['tWall'], 'ns');
});
