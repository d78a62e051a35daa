// Fragmented-program patterns on simulated runs written as real traces: they sum to SLOW's
// figures of the same trace (late producer = S less the tails, slow transfer = L, system delay
// = the O of idle intervals, oversubscribed cores = pre-emption), recover exactly the delays
// the simulator injected alone, and the imbalance of a quantum never exceeds the idle time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simulate, type SimOptions } from '../../src/analysis/sim/simulate.js';
import { writeSimTrace } from '../../src/analysis/sim/write.js';
import { analyzeSlowTrace } from '../../src/analysis/slow/index.js';
import { analyzePatternsTrace, type PatternReport } from '../../src/analysis/patterns/index.js';
import type { TraceManifest } from '../../src/trace/manifest.js';

function traced(t: { after(fn: () => void): void }, o: SimOptions, over: Partial<TraceManifest> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'luna-patterns-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const sim = simulate(o);
  writeSimTrace(dir, { ...sim.manifest, ...over }, sim.events);
  return { dir, sim };
}

const total = (r: PatternReport, id: string): number => r.patterns.find((p) => p.id === id)?.wasted ?? 0;
const near = (a: number, b: number, what: string): void => assert.ok(Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(b)) + 1, `${what}: ${a} vs ${b}`);

test('fragmented patterns sum to SLOW\'s figures of the same trace (random simulated runs)', (t) => {
  for (let seed = 1; seed <= 12; seed++) {
    const { dir } = traced(t, { seed, nodes: 1 + (seed % 3), threads: 1 + (seed % 2), cfs: 60, hopProb: 0.2, migrateProb: 0.2 });
    const p = analyzePatternsTrace(dir);
    const s = analyzeSlowTrace(dir);
    near(total(p, 'late_producer'), s.t.S - s.starvationTail, `seed ${seed} late producer = S − tail`);
    near(total(p, 'slow_transfer'), s.t.L, `seed ${seed} slow transfer = L`);
    near(total(p, 'system_delay'), s.overhead.sendDelay + s.overhead.startDelay, `seed ${seed} system delay = O of idle intervals`);
    assert.equal(p.ranks, 0);
    assert.equal(p.patterns.filter((x) => x.model === 'spmd').length, 0, 'no SPMD pattern in a fragmented run');
    // every leaf is a lane of the run
    for (const x of p.patterns) for (const site of x.sites) for (const l of site.locations) assert.match(l.label, x.id === 'imbalance_in_quantum' ? /^node \d+$/ : /^node \d+ lane \d+$/);
  }
});

test('an injected transfer latency alone is found as slow transfer, exactly the L the simulator injected', (t) => {
  const { dir, sim } = traced(t, { seed: 7, nodes: 2, threads: 1, cfs: 40, postDelay: [0, 0], sendDelay: [0, 0], startDelay: [0, 0], rootDelay: [0, 0], endDelay: [0, 0], latency: [200_000, 400_000], preemptProb: 0, migrateProb: 0 });
  const p = analyzePatternsTrace(dir);
  assert.ok(sim.truth.L > 0);
  near(total(p, 'slow_transfer'), sim.truth.L, 'slow transfer = injected L');
  assert.equal(total(p, 'system_delay'), 0, 'no system delay was injected');
  assert.equal(total(p, 'oversubscribed_cores'), 0);
  assert.ok(p.patterns.find((x) => x.id === 'slow_transfer')!.found, 'above the noise threshold');
});

test('injected start delays alone are found as system delay before start, exactly', (t) => {
  const { dir, sim } = traced(t, { seed: 9, nodes: 1, threads: 2, cfs: 40, postDelay: [0, 0], sendDelay: [0, 0], startDelay: [100_000, 300_000], rootDelay: [0, 0], endDelay: [0, 0], latency: [0, 0], preemptProb: 0, migrateProb: 0 });
  const p = analyzePatternsTrace(dir);
  assert.ok(sim.truth.O > 0);
  near(total(p, 'system_delay'), sim.truth.O, 'system delay = injected O');
  assert.equal(total(p, 'slow_transfer'), 0);
});

test('oversubscribed cores: the pre-emption of CFs on a machine with more workers than CPUs, none on one with enough', (t) => {
  const o: SimOptions = { seed: 11, nodes: 1, threads: 3, cfs: 50, preemptProb: 0.8, migrateProb: 0 };
  const a = traced(t, o, { machines: [{ host: 'h', cores: 2, nodes: [0] }] });
  const s = analyzeSlowTrace(a.dir);
  assert.ok(s.overhead.preempt > 0);
  near(total(analyzePatternsTrace(a.dir), 'oversubscribed_cores'), s.overhead.preempt, 'oversubscribed = SLOW pre-emption');
  const b = traced(t, o, { machines: [{ host: 'h', cores: 8, nodes: [0] }] });
  assert.equal(total(analyzePatternsTrace(b.dir), 'oversubscribed_cores'), 0);
});

test('imbalance within a quantum: each node\'s distance to the most loaded, never more than the idle time of the run', (t) => {
  for (const seed of [3, 4, 5]) {
    const { dir } = traced(t, { seed, nodes: 3, threads: 2, cfs: 80 });
    const p = analyzePatternsTrace(dir, { quantumNs: 1_000_000 });
    const s = analyzeSlowTrace(dir);
    const imb = total(p, 'imbalance_in_quantum');
    assert.ok(imb > 0, `seed ${seed}: some imbalance`);
    assert.ok(imb <= s.t.S + s.t.L + s.overhead.sendDelay + s.overhead.startDelay + s.t.W + 1, `seed ${seed}: imbalance ${imb} within the idle time`);
    const q = p.patterns.find((x) => x.id === 'imbalance_in_quantum')!;
    assert.match(q.sites[0]!.site, /^quantum \d+ \[/);
    assert.ok(p.quantumNs >= 1_000_000 * 0.99 && p.quantumNs <= 1_000_000 * 1.5, `quantum ${p.quantumNs}`);
  }
});
