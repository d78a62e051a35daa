// Ground truth: on random simulated programs the analyzer recovers exactly the S/L/O/W/U the
// simulator injected (totals, per node, per worker thread), to 1 ns.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeSlow } from '../../src/analysis/slow/index.js';
import { simulate, type SimOptions } from '../../src/analysis/sim/simulate.js';

const F = ['S', 'L', 'O', 'W', 'U'] as const;

function close(a: number, b: number, what: string): void {
  assert.ok(Math.abs(a - b) <= 1, `${what}: analyzer ${a} vs injected ${b}`);
}

function check(o: SimOptions): void {
  const sim = simulate(o);
  const r = analyzeSlow(sim.manifest, sim.events);
  const tag = `seed ${o.seed} (${o.nodes}×${o.threads}, ${o.cfs} CFs)`;
  assert.deepEqual(r.warnings, [], `${tag}: warnings`);
  close(r.tWall, sim.truth.tWall, `${tag} T_wall`);
  close(r.tTotal, sim.truth.tTotal, `${tag} T_total`);
  for (const f of F) close(r.t[f], sim.truth[f], `${tag} T_${f}`);
  close(r.sum, r.tTotal, `${tag} ΣT_X`);
  r.perNode.forEach((v, n) => { for (const f of F) close(v[f], sim.truth.perNode[n][f], `${tag} node ${n} T_${f}`); });
  r.perThread.forEach((v, s) => { for (const f of F) close(v[f], sim.truth.perThread[s][f], `${tag} thread ${v.node}.${v.thread} T_${f}`); });
  assert.equal(r.cfs, sim.program.length, `${tag}: CF count`);
}

test('analyzer recovers injected SLOU exactly on 150 random programs', () => {
  for (let seed = 1; seed <= 150; seed++) {
    const nodes = 1 + (seed % 4), threads = 1 + ((seed >> 2) % 3);
    check({ seed, nodes, threads, cfs: 20 + (seed * 37) % 120, hopProb: 0.3, migrateProb: 0.3 });
  }
});

test('exact with zero delays (ties everywhere)', () => {
  for (let seed = 200; seed < 230; seed++) {
    check({ seed, nodes: 3, threads: 2, cfs: 80, postDelay: [0, 0], sendDelay: [0, 0], startDelay: [0, 0], rootDelay: [0, 0], latency: [0, 3], work: [1, 5], preemptProb: 0.5 });
  }
});

test('a larger program stays exact and the series sums to the totals', () => {
  const sim = simulate({ seed: 999, nodes: 4, threads: 3, cfs: 3000 });
  const r = analyzeSlow(sim.manifest, sim.events, { windowNs: 50_000 });
  for (const f of F) close(r.t[f], sim.truth[f], `T_${f}`);
  for (const f of F) {
    const s = r.series.points.reduce((a, p) => a + p[f], 0);
    assert.ok(Math.abs(s - r.t[f]) < 1e-6 * r.tTotal + 1, `series Σ${f}`);
  }
  assert.ok(r.series.points.length >= Math.floor(r.tWall / 50_000));
  const auto = analyzeSlow(sim.manifest, sim.events);
  assert.ok(auto.series.points.length <= 256 && auto.series.points.length >= 100, `auto windows ${auto.series.points.length}`);
});

import { Prng } from '../../src/analysis/sim/prng.js';
import type { TraceEvent } from '../../src/trace/schema.js';

/** Another valid merge: events that tie in time are interleaved randomly across threads. */
function shuffleTies(ev: TraceEvent[], seed: number): TraceEvent[] {
  const rng = new Prng(seed), out: TraceEvent[] = [];
  for (let i = 0; i < ev.length;) {
    let j = i;
    while (j < ev.length && ev[j].t === ev[i].t) j++;
    const streams = new Map<string, TraceEvent[]>();
    for (let k = i; k < j; k++) {
      const s = `${ev[k].node}.${ev[k].thread}`;
      (streams.get(s) ?? streams.set(s, []).get(s)!).push(ev[k]);
    }
    const qs = [...streams.values()];
    while (qs.length > 0) {
      const q = Math.floor(rng.next() * qs.length);
      out.push(qs[q].shift()!);
      if (qs[q].length === 0) qs.splice(q, 1);
    }
    i = j;
  }
  return out;
}

test('exact whatever the merge order of events that tie in time across threads', () => {
  for (let seed = 300; seed < 340; seed++) {
    const o: SimOptions = { seed, nodes: 3, threads: 2, cfs: 60, postDelay: [0, 1], sendDelay: [0, 1], startDelay: [0, 1], rootDelay: [0, 0], latency: [1, 3], work: [1, 4], preemptProb: 0.5 };
    const sim = simulate(o);
    const r = analyzeSlow(sim.manifest, shuffleTies(sim.events, seed));
    assert.deepEqual(r.warnings, [], `seed ${seed}`);
    for (const f of F) close(r.t[f], sim.truth[f], `seed ${seed} T_${f}`);
  }
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeSimTrace } from '../../src/analysis/sim/write.js';
import { analyzeSlowTrace } from '../../src/analysis/slow/index.js';

test('through real trace files (ThreadTraceWriter → readTrace): still exact', () => {
  const root = mkdtempSync(join(tmpdir(), 'slow-'));
  try {
    for (let seed = 400; seed < 410; seed++) {
      const sim = simulate({ seed, nodes: 1 + (seed % 3), threads: 2, cfs: 150, hopProb: 0.3 });
      const dir = join(root, `s${seed}`);
      writeSimTrace(dir, sim.manifest, sim.events);
      const r = analyzeSlowTrace(dir);
      assert.deepEqual(r.warnings, [], `seed ${seed}`);
      for (const f of F) close(r.t[f], sim.truth[f], `seed ${seed} T_${f}`);
      r.perThread.forEach((v, s) => { for (const f of F) close(v[f], sim.truth.perThread[s][f], `seed ${seed} thread ${s} T_${f}`); });
    }
  } finally { rmSync(root, { recursive: true, force: true }); }
});

test('CFs the system thread runs on a lane (recorded in its own file, lane kept): exact, no warnings', () => {
  for (let seed = 500; seed < 520; seed++) {
    const sim = simulate({ seed, nodes: 2, threads: 2, cfs: 100 });
    const ev = sim.events.map((e) => (e.kind === 'cfStart' || e.kind === 'cfFinish' || e.kind === 'cfInput' ? { ...e, thread: 0 } : e));
    const r = analyzeSlow(sim.manifest, ev);
    assert.deepEqual(r.warnings, [], `seed ${seed}`);
    for (const f of F) close(r.t[f], sim.truth[f], `seed ${seed} T_${f}`);
  }
});

test('waits inside CFs (partly spun) and outside any CF are W, exactly, and the rest unchanged', () => {
  let waited = 0;
  for (let seed = 300; seed < 360; seed++) {
    const nodes = 1 + (seed % 3), threads = 1 + ((seed >> 1) % 3);
    const o: SimOptions = { seed, nodes, threads, cfs: 60, waitProb: 0.4, outsideWaitProb: 0.3, spin: (seed % 4) / 4, hopProb: 0.3, migrateProb: 0.3 };
    check(o);
    waited += simulate(o).truth.W;
  }
  assert.ok(waited > 0, 'the programs waited');
});

test('waits are W through the trace files too (writer, merge, model)', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'luna-simwait-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const sim = simulate({ seed: 77, nodes: 2, threads: 2, cfs: 200, waitProb: 0.5, outsideWaitProb: 0.3, spin: 0.5 });
  writeSimTrace(dir, sim.manifest, sim.events);
  const r = analyzeSlowTrace(dir);
  assert.ok(sim.truth.W > 0);
  for (const f of F) close(r.t[f], sim.truth[f], `T_${f}`);
  assert.ok(r.blame.waiting.waits > 0 && Math.abs(r.blame.waiting.total - sim.truth.W) <= 1, 'every wait is blamed');
  assert.ok(r.blame.waiting.byKind.some((k) => k.key === 'barrier') && r.blame.waiting.byKind.some((k) => k.key === 'test'));
});
