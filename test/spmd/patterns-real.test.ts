// The pattern engine on real runs of the SPMD layer: one program per pattern of seed 001 (and the
// split-phase wait) under examples/patterns/, each with its inefficiency injected alone — a rank
// late by D, a lock held D past the instant the last rank asked for it (choreographed by events:
// it asks once the holder says it holds the lock), or a rank held D longer than the others after an
// operation completed (all leave at a common instant after it, that one D later) — run by
// `luna spmd --trace` on worker threads of one process and across two node processes. The engine
// must report that pattern (with the complement the seed defines beside it) at the operation's
// call site, charged to the ranks that waited, each within 5 % of D (plus the latest a rank woke
// past the start line: a rank woken late reaches the operation late), and nothing else there; the
// same programs run balanced (every rank takes the delay) report nothing above the noise threshold
// at that call site.
//
// Noise: on a machine with a core for every runnable thread, nothing but the injected pattern is
// above the documented noise threshold at the measured site, and nothing at all there in the
// balanced run. On a busy machine a woken rank waits ms for a core and the engine rightly reports
// those waits (a barrier's release skews its exits by them). Each run measures that noise itself:
// before picking the start line every rank sleeps until 16 common instants, each followed by a barrier (the
// clean case of the measured operations), and prints the latest it woke after one; a rank charged
// at the site within twice that plus what the engine charged it at those 16 calibration barriers
// (all patterns) is the run's scheduling, not a finding, and the test says so. On a quiet machine
// both are µs and the check is the documented threshold's. Past that, on an oversubscribed
// machine (load average above the cores) the bound is the validation's resolution, 5 % of D.
//
// What the programs do before the measured operation (allocate, agree on a start line) waits as
// any synchronisation does: on a quiet machine for µs, on a loaded one for ms. Those sites are
// allowed their noise; a pattern charged anywhere else than there or the measured site fails.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { explain, inTempDir, luna, ROOT } from '../cli/helpers.js';
import { analyzePatternsTrace } from '../../src/analysis/patterns/index.js';
import { analyzeSlowTrace } from '../../src/analysis/slow/trace.js';
import { NOISE_PER_INSTANCE_NS, NOISE_SHARE, type PatternNode } from '../../src/analysis/patterns/results.js';

// ≫ the noise of a synchronisation on a loaded machine (a woken rank waits for a core: up to
// 74 ms seen with a load of 20 on 2 cores), so 5 % of it holds there too
const D_MS = 1500;
const D = D_MS * 1e6;
const PROGRAMS = join(ROOT, 'examples', 'patterns');

interface Case {
  program: string;
  pattern: string;
  /** rank → expected wasted time at the site, for 4 ranks */
  expect: number[];
  /** patterns the seed defines to come with it */
  with?: string[];
}

const CASES: Case[] = [
  { program: 'lock-contention', pattern: 'lock_contention', expect: [3] },
  { program: 'entry-sync', pattern: 'entry_sync', expect: [0, 1, 3] },
  { program: 'exit-sync', pattern: 'exit_sync', expect: [0, 2, 3] },
  { program: 'wait-at-barrier', pattern: 'wait_at_barrier', expect: [0, 1, 2] },
  { program: 'barrier-completion', pattern: 'barrier_completion', expect: [0, 1, 3] },
  { program: 'late-broadcast', pattern: 'late_broadcast', expect: [0, 2, 3] },
  { program: 'early-gather', pattern: 'early_gather', expect: [0], with: ['wait_inside_collective'] },
  { program: 'early-prefix-reduction', pattern: 'early_prefix_reduction', expect: [1, 2, 3] },
  { program: 'nxn-entry-sync', pattern: 'nxn_entry_sync', expect: [0, 1, 3] },
  { program: 'nxn-exit-sync', pattern: 'nxn_exit_sync', expect: [0, 1, 2] },
  { program: 'wait-inside-collective', pattern: 'wait_inside_collective', expect: [0] },
  { program: 'wait-in-all-alloc', pattern: 'wait_in_all_alloc', expect: [1, 2, 3] },
  { program: 'split-phase-wait', pattern: 'wait_at_barrier', expect: [0, 1, 3] },
];
/** across two node processes (ranks 0, 1 on node 0; 2, 3 on node 1): the remote lock queue, barriers, collectives */
const ACROSS = ['lock-contention', 'wait-at-barrier', 'late-broadcast', 'nxn-exit-sync'];

/** The measured operation's call site: the line marked `// site`, at the call that starts it. */
function siteOf(program: string): string {
  const lines = source(program);
  const i = lines.findIndex((l) => /\/\/ site\b/.test(l));
  assert.ok(i >= 0, `${program}.ts marks its measured operation with // site`);
  // the column of the call (`barrier();`, `const a = allAlloc(…)`)
  return `${program}.ts:${i + 1}:${lines[i]!.search(/[A-Za-z_$][\w$]*\(/) + 1}`;
}

/** The start line's calibration barrier (examples/patterns/inject.ts, the line marked `// calibration`): the clean case, sampled in every run. */
function calibrationSite(): string {
  const lines = source('inject');
  const i = lines.findIndex((l) => /\/\/ calibration\b/.test(l));
  assert.ok(i >= 0, 'inject.ts marks its calibration barrier');
  return `inject.ts:${i + 1}:${lines[i]!.search(/[A-Za-z_$][\w$]*\(/) + 1}`;
}

const source = (program: string): string[] => readFileSync(join(PROGRAMS, `${program}.ts`), 'utf8').split('\n');

/** Sites a program's setup synchronises at: its allocations and the start line (examples/patterns/inject.ts). */
function setupSite(site: string, program: string): boolean {
  if (/(^|\/)inject\.ts:\d+:\d+$/.test(site)) return true;
  const m = new RegExp(`(^|/)${program}\\.ts:(\\d+):\\d+$`).exec(site);
  const line = m ? source(program)[Number(m[2]) - 1] ?? '' : '';
  return /allAlloc\(/.test(line) && !/\/\/ site\b/.test(line);
}

/** Above the documented noise threshold at one call site: per occurrence and as a share of the ranks' time. */
function aboveNoise(p: PatternNode, s: { wasted: number; count: number }): boolean {
  const total = p.share > 0 ? p.wasted / p.share : Infinity;
  return s.wasted > NOISE_PER_INSTANCE_NS * Math.max(1, s.count) && s.wasted > NOISE_SHARE * total;
}

/** more runnable threads than cores over the last minute: woken ranks wait for a core */
const oversubscribed = (): boolean => loadavg()[0]! > availableParallelism();

/**
 * What the engine charged each rank at the calibration barriers, all patterns together: their
 * entries come at common instants (the skew is the timed wakes') and their exits as the release
 * wakes the ranks — the scheduling noise of 20 clean synchronisations of this very run.
 */
function calibrationNoise(run: Run): Map<number, number> {
  const out = new Map<number, number>();
  for (const q of run.patterns) {
    const cs = q.sites.find((x) => x.site.endsWith(`/${calibrationSite()}`) || x.site === calibrationSite());
    for (const l of cs?.locations ?? []) out.set(l.loc, (out.get(l.loc) ?? 0) + l.wasted);
  }
  return out;
}

/**
 * Noise at the measured site that the run may show: none above the documented threshold; or none
 * beyond what the machine's scheduling did to this very run — each rank charged at most twice the
 * latest a timed wake of the run came (`wake lateness` the programs print: a synchronisation that
 * wakes ranks is skewed by the same delays); or on an oversubscribed machine none above the
 * validation's resolution (each location under 5 % of D).
 */
function checkNoise(p: PatternNode, s: { wasted: number; count: number; locations: { loc: number; label: string; wasted: number }[] }, what: () => string, diag: (m: string) => void, run: Run): void {
  if (!aboveNoise(p, s)) return;
  const cal = calibrationNoise(run);
  const bound = (loc: number): number => 2 * run.lateNs + (cal.get(loc) ?? 0) + NOISE_PER_INSTANCE_NS * Math.max(1, s.count);
  if (s.locations.every((l) => l.wasted <= bound(l.loc))) {
    diag(`${p.id} ${(s.wasted / 1e6).toFixed(3)} ms of noise at the measured site, each rank within twice the run's wake lateness ${(run.lateNs / 1e6).toFixed(3)} ms plus what its 16 calibration barriers were charged (${[...cal].map(([l, w]) => `rank ${l} ${(w / 1e6).toFixed(3)}`).join(', ') || 'nothing'} ms)`);
    return;
  }
  assert.ok(oversubscribed(), `${p.id} above the noise threshold: ${what()}`);
  for (const l of s.locations) assert.ok(l.wasted < 0.05 * D, `${p.id} ${(l.wasted / 1e6).toFixed(3)} ms at ${l.label} (load ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} cores): ${what()}`);
  diag(`load ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} cores: ${p.id} ${(s.wasted / 1e6).toFixed(3)} ms of noise at the measured site, under 5 % of D at every rank`);
}

/** the latest a timed wake of the run came, ns: the largest `wake lateness` a rank printed */
function lateness(stdout: string): number {
  const all = [...stdout.matchAll(/^wake lateness: rank \d+ ([\d.]+) ms/gm)].map((m) => Number(m[1]) * 1e6);
  assert.equal(all.length, 4, `every rank prints its wake lateness:\n${stdout}`);
  return Math.max(...all);
}

/**
 * the latest a rank woke after an instant it slept until past the start line, ns (`site lateness`):
 * what the ranks wait at the site differs from the injected delay by up to that
 */
function siteLateness(stdout: string): number {
  const all = [...stdout.matchAll(/^site lateness: rank \d+ ([\d.]+) ms/gm)].map((m) => Number(m[1]) * 1e6);
  assert.equal(all.length, 4, `every rank prints its lateness past the start line:\n${stdout}`);
  return Math.max(...all);
}

async function runTraced(dir: string, program: string, balanced: boolean, nodes: number, attempt = 0) {
  const tr = join(dir, `${program}-${balanced ? 'balanced' : 'injected'}-${nodes}${attempt > 0 ? `-again${attempt}` : ''}`);
  const r = await luna(['spmd', '--threads', '4', '--nodes', String(nodes), '--trace', tr, join(PROGRAMS, `${program}.ts`), String(D_MS), ...(balanced ? ['balanced'] : [])], dir, 90_000, { ...process.env, LUNA_CACHE_DIR: join(dir, 'cache') });
  assert.equal(r.status, 0, explain(r));
  const rep = analyzePatternsTrace(tr);
  assert.deepEqual(rep.warnings, [], program);
  assert.equal(rep.damage.total, 0, program);
  const siteLateNs = siteLateness(r.stdout);
  if (program === 'wait-at-barrier' && nodes === 1 && !balanced) checkSlow(tr, siteLateNs);
  return Object.assign(rep, { lateNs: lateness(r.stdout), siteLateNs });
}

/**
 * SLOW of the same trace agrees with the engine: a rank's program between its operations is
 * useful work (U), its waits W. The late rank spent D in its program (U ≥ D); the ranks that waited
 * for it have it as W; each rank's five parts sum to T_wall.
 */
function checkSlow(tr: string, late: number): void {
  const slow = analyzeSlowTrace(tr);
  const row = (rank: number) => slow.perThread.find((x) => x.node === 0 && x.thread === rank + 1)!;
  for (let rank = 0; rank < 4; rank++) {
    const x = row(rank);
    const sum = x.S + x.L + x.O + x.W + x.U;
    assert.ok(Math.abs(sum - slow.tWall) <= 1e-6 * slow.tWall + 1, `rank ${rank}: S+L+O+W+U ${sum} ≠ T_wall ${slow.tWall}`);
    if (rank === 3) assert.ok(x.U >= 0.95 * D, `the late rank's ${D_MS} ms in its program is U: ${JSON.stringify(x)}`);
    else assert.ok(x.W >= 0.95 * D - late && x.U < 0.5 * D, `rank ${rank} waited ${D_MS} ms for the late rank, W: ${JSON.stringify(x)}`);
  }
}

type Run = Awaited<ReturnType<typeof runTraced>>;

function checkInjected(c: Case, rep: Run, where: string, diag: (m: string) => void): void {
  const site = siteOf(c.program);
  const atSite = (p: PatternNode) => p.sites.find((s) => s.site.endsWith(`/${site}`) || s.site === site);
  const what = `${c.program} ${where}:\n${JSON.stringify(rep.patterns.filter((p) => p.wasted > 0).map((p) => [p.id, p.sites.map((s) => [s.site, s.locations.map((l) => [l.label, Math.round(l.wasted / 1e3)])])]))}`;
  const p = rep.patterns.find((x) => x.id === c.pattern); // a pattern that wasted nothing is not listed
  assert.ok(p?.found, `${c.pattern} not found (load ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} cores): ${what}`);
  const s = atSite(p);
  assert.ok(s, `${c.pattern} not at ${site}: ${what}`);
  const got = new Map(s.locations.map((l) => [l.loc, l.wasted]));
  // a rank woken late past the start line reaches the site late: the waits there differ from D by up to that
  const slack = 0.05 * D + rep.siteLateNs;
  for (const rank of c.expect) {
    const w = got.get(rank) ?? 0;
    assert.ok(Math.abs(w - D) <= slack, `rank ${rank}: ${(w / 1e6).toFixed(3)} ms wasted, ${D_MS} ms injected, ranks woken up to ${(rep.siteLateNs / 1e6).toFixed(3)} ms late: ${what}`);
  }
  diag(`${c.program} ${where}: ${c.pattern} at the site ${c.expect.map((r) => `rank ${r} ${((got.get(r) ?? 0) / 1e6).toFixed(3)} ms`).join(', ')} of ${D_MS} injected (ranks woken up to ${(rep.siteLateNs / 1e6).toFixed(3)} ms late); ${worstElse(rep, atSite, c.pattern)}`);
  for (const [rank, w] of got) if (!c.expect.includes(rank)) assert.ok(w < slack, `rank ${rank} charged ${(w / 1e6).toFixed(3)} ms though nothing was injected there: ${what}`);
  // exactly that pattern (and its companions) at the site; elsewhere only the setup's noise
  const expected = new Set([c.pattern, ...(c.with ?? [])]);
  for (const q of rep.patterns) {
    for (const qs of q.sites) {
      if (!aboveNoise(q, qs)) continue;
      const measured = qs === atSite(q);
      if (measured) { if (!expected.has(q.id)) checkNoise(q, qs, () => what, diag, rep); } else assert.ok(setupSite(qs.site, c.program), `${q.id} charged at ${qs.site}, neither the measured operation nor the setup: ${what}`);
    }
  }
}

/** what the run showed besides the finding, for the log: the largest other charge at the measured site and its threshold */
function worstElse(rep: Run, atSite: (p: PatternNode) => { wasted: number; count: number } | undefined, skip?: string): string {
  let worst: { id: string; wasted: number; bar: number } | undefined;
  for (const q of rep.patterns) {
    const qs = atSite(q);
    if (!qs || q.id === skip) continue;
    const total = q.share > 0 ? q.wasted / q.share : Infinity;
    const bar = Math.max(NOISE_PER_INSTANCE_NS * Math.max(1, qs.count), NOISE_SHARE * total);
    if (!worst || qs.wasted / bar > worst.wasted / worst.bar) worst = { id: q.id, wasted: qs.wasted, bar };
  }
  return worst ? `largest other at the site ${worst.id} ${(worst.wasted / 1e6).toFixed(3)} ms against a threshold of ${(worst.bar / 1e6).toFixed(3)} ms (load ${loadavg()[0]!.toFixed(1)}, wake lateness ${(rep.lateNs / 1e6).toFixed(3)} ms)` : 'nothing else at the site';
}

/**
 * The balanced run: nothing at the measured site above noise. On an oversubscribed machine a
 * rank descheduled for hundreds of ms inside the measured barrier is the machine's noise, not a
 * finding (430 ms at load 10 on 2 cores, seen once): the balanced program runs once more there, and
 * must be clean then. A product that charges a balanced program charges it in both runs.
 */
async function cleanRun(c: Case, run: (attempt: number) => Promise<Run>, where: string, diag: (m: string) => void): Promise<void> {
  const first = await run(0);
  try {
    checkClean(c, first, where, diag);
  } catch (e) {
    if (!oversubscribed()) throw e;
    diag(`balanced ${c.program} ${where}, run again on an oversubscribed machine (load ${loadavg()[0]!.toFixed(1)}): ${(e as Error).message}`);
    checkClean(c, await run(1), where, diag);
  }
}

function checkClean(c: Case, rep: Run, where: string, diag: (m: string) => void): void {
  const site = siteOf(c.program);
  diag(`balanced ${c.program} ${where}: ${worstElse(rep, (p) => p.sites.find((s) => s.site.endsWith(`/${site}`) || s.site === site))}`);
  for (const q of rep.patterns) {
    for (const qs of q.sites) {
      if (!aboveNoise(q, qs)) continue;
      if (qs.site.endsWith(`/${site}`) || qs.site === site) { checkNoise(q, qs, () => `balanced ${c.program} ${where} at ${site}`, diag, rep); continue; }
      assert.ok(setupSite(qs.site, c.program), `balanced ${c.program} ${where}: ${q.id} at ${qs.site}`);
    }
  }
}

for (const c of CASES) {
  test(`${c.program} on 4 threads: ${c.pattern} injected alone is found at its site and ranks within 5 %; balanced, nothing there`, async (t) => {
    const diag = (m: string): void => t.diagnostic(m);
    await inTempDir('luna-spmd-patterns-', async (dir) => {
      checkInjected(c, await runTraced(dir, c.program, false, 1), 'on 4 threads', diag);
      await cleanRun(c, (a) => runTraced(dir, c.program, true, 1, a), 'on 4 threads', diag);
    });
  });
}

for (const name of ACROSS) {
  const c = CASES.find((x) => x.program === name)!;
  test(`${c.program} on 2 node processes × 2 ranks: ${c.pattern} found the same across nodes`, async (t) => {
    const diag = (m: string): void => t.diagnostic(m);
    await inTempDir('luna-spmd-patterns-', async (dir) => {
      checkInjected(c, await runTraced(dir, c.program, false, 2), 'on 2 nodes', diag);
      await cleanRun(c, (a) => runTraced(dir, c.program, true, 2, a), 'on 2 nodes', diag);
    });
  });
}
