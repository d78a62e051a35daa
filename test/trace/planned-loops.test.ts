// Traced runs plan their loops too (src/runtime/node/loop-trace.ts): the trace of a planned run
// must describe the same fragments as the fragment-by-fragment path's — the same CF ids, the
// same DFs, each CF's inputs and outputs — with every output dated by its producer's end on its
// worker, so that the analyses (SLOW, the report) read it with no special case. Real worker
// threads: a two-column stencil, a chain whose outputs stay inside the loop, and one whose
// outputs are read inside the loop and after it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readTrace, type TraceEvent } from '../../src/trace/index.js';
import { assertOk, describeRun, luna, timingOf, type Run } from '../runtime/helpers.js';
import { PROGRAM, expected } from '../runtime/stencil2.js';
import { CHAIN, ESCAPING, UCODES, chainExpected } from '../runtime/plan-programs.js';

let dir = '';
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'luna-planned-trace-'));
  writeFileSync(join(dir, 'ucodes.ts'), UCODES);
  writeFileSync(join(dir, 'stencil.fa'), PROGRAM);
  writeFileSync(join(dir, 'chain.fa'), CHAIN);
  writeFileSync(join(dir, 'escaping.fa'), ESCAPING);
});
after(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

const traced = (file: string, args: string[], plans: '0' | '1', trace: string): Promise<Run> =>
  luna(['run', '--warm-start', '--timing', '--threads', '2', '--trace', trace, join(dir, file), ...args], { env: { ...process.env, LUNA_LOOP_PLANS: plans }, timeoutMs: 120_000 });

/** What a trace says each CF that ran is: by its global id, its site, the DFs it read and those it made. */
interface Graph {
  cfs: Map<string, string>;
  dfs: Set<string>;
  events: TraceEvent[];
  warnings: string[];
}

function graphOf(trace: string): Graph {
  const t = readTrace(trace);
  const events = [...t.events];
  const name = new Map<string, string>(); // `thread:df` → key (DF numbers are per file)
  const gid = new Map<number, string>(), site = new Map<number, number>();
  const ins = new Map<number, string[]>(), outs = new Map<number, string[]>();
  const ran = new Set<number>(), dfs = new Set<string>();
  for (const e of events) {
    if (e.kind === 'dfName') name.set(`${e.thread}:${e.df}`, e.name);
    else if (e.kind === 'cfCreated') { gid.set(e.cf, e.gid); site.set(e.cf, e.site); }
    else if (e.kind === 'cfInput') (ins.get(e.cf) ?? ins.set(e.cf, []).get(e.cf)!).push(name.get(`${e.thread}:${e.df}`)!);
    else if (e.kind === 'dfComputed') { const k = name.get(`${e.thread}:${e.df}`)!; dfs.add(k); (outs.get(e.producerCf) ?? outs.set(e.producerCf, []).get(e.producerCf)!).push(k); }
    else if (e.kind === 'cfStart') ran.add(e.cf);
  }
  const cfs = new Map<string, string>();
  for (const cf of ran) {
    assert.ok(gid.has(cf), `CF ${cf} started but was never created in ${trace}`);
    cfs.set(gid.get(cf)!, `site ${site.get(cf)} in [${(ins.get(cf) ?? []).sort().join(' ')}] out [${(outs.get(cf) ?? []).sort().join(' ')}]`);
  }
  return { cfs, dfs, events, warnings: t.warnings };
}

/** Every DF a CF read was computed (by its producer's end) no later than the CF started: the same clock, causality, not speed. */
function causal(g: Graph): void {
  const name = new Map<string, string>(), computedAt = new Map<string, number>(), inputs = new Map<number, string[]>();
  let checked = 0;
  for (const e of g.events) {
    if (e.kind === 'dfName') name.set(`${e.thread}:${e.df}`, e.name);
    else if (e.kind === 'dfComputed') computedAt.set(name.get(`${e.thread}:${e.df}`)!, e.t);
    else if (e.kind === 'cfInput') (inputs.get(e.cf) ?? inputs.set(e.cf, []).get(e.cf)!).push(name.get(`${e.thread}:${e.df}`)!);
  }
  for (const e of g.events) {
    if (e.kind !== 'cfStart') continue;
    for (const k of inputs.get(e.cf) ?? []) {
      const at = computedAt.get(k);
      assert.ok(at !== undefined, `input ${k} of CF ${e.cf} was never computed`);
      assert.ok(at <= e.t, `input ${k} of CF ${e.cf} computed at ${at}, after the CF started at ${e.t}`);
      checked++;
    }
  }
  assert.ok(checked > 0, 'no input checked');
}

const slow = async (trace: string): Promise<{ cfs: number; criticalPath: { cfs: number }; damage?: { counts: Record<string, number> }; t: { U: number } }> => {
  const r = await luna(['analyze', 'slow', '--json', trace], { timeoutMs: 60_000 });
  assertOk(r);
  return JSON.parse(r.stdout) as { cfs: number; criticalPath: { cfs: number }; t: { U: number } };
};

test('a traced planned run records the same CFs, DFs, inputs and outputs as a traced unplanned one', async () => {
  const steps = 150, n = 200;
  const tr = (k: string): string => join(dir, `${k}.trace`);
  // the stencil's outputs all reach the store (no req_count), the chain's stay inside the loop
  // but its last, the escaping chain's are read inside and after it
  const [s1, s0, c1, c0, e1, e0] = await Promise.all([
    traced('stencil.fa', [String(steps), 'ok'], '1', tr('s1')), traced('stencil.fa', [String(steps), 'ok'], '0', tr('s0')),
    traced('chain.fa', [String(n)], '1', tr('c1')), traced('chain.fa', [String(n)], '0', tr('c0')),
    traced('escaping.fa', [String(n)], '1', tr('e1')), traced('escaping.fa', [String(n)], '0', tr('e0')),
  ]);
  for (const r of [s1, s0, c1, c0, e1, e0]) assertOk(r);
  for (const r of [s1, s0]) assert.deepEqual(r.stdout.trim().split('\n').sort(), expected(steps), describeRun(r));
  for (const r of [c1, c0]) assert.deepEqual(r.stdout.trim().split('\n').sort(), chainExpected(n, false), describeRun(r));
  for (const r of [e1, e0]) assert.deepEqual(r.stdout.trim().split('\n').sort(), chainExpected(n, true), describeRun(r));
  // traced runs are planned (most steps: the first chunk is unrolled before the pump plans the rest)
  const planned = (r: Run): number => timingOf<{ planned: number }>(r).planned;
  assert.ok(planned(s1) > steps, `planned ${planned(s1)}\n${describeRun(s1)}`);
  for (const r of [c1, e1]) assert.ok(planned(r) > n / 2, `planned ${planned(r)}\n${describeRun(r)}`);
  for (const r of [s0, c0, e0]) assert.equal(planned(r), 0, describeRun(r));

  for (const [on, off] of [['s1', 's0'], ['c1', 'c0'], ['e1', 'e0']] as const) {
    const g1 = graphOf(tr(on)), g0 = graphOf(tr(off));
    assert.deepEqual(g1.warnings, [], `${on}: ${g1.warnings.join('\n')}`);
    assert.deepEqual(g0.warnings, [], `${off}: ${g0.warnings.join('\n')}`);
    assert.deepEqual(g1.dfs, g0.dfs, `${on} against ${off}: the DFs computed`);
    assert.deepEqual(new Map([...g1.cfs].sort()), new Map([...g0.cfs].sort()), `${on} against ${off}: the CFs, their inputs and outputs`);
    causal(g1);
    causal(g0);
    const [a1, a0] = await Promise.all([slow(tr(on)), slow(tr(off))]);
    assert.equal(a1.cfs, a0.cfs, `${on} against ${off}: SLOW's CF count`);
    // the stencil's every step waits for both of the step before: its critical path is one CF a
    // step whatever the timing (the chain's depends on which `show` ends last)
    if (on === 's1') assert.equal(a1.criticalPath.cfs, a0.criticalPath.cfs, `${on} against ${off}: the critical path's CFs`);
    assert.ok(a1.t.U > 0, `${on}: no useful work`);
    assert.deepEqual(a1.damage?.counts ?? {}, {}, `${on}: damage ${JSON.stringify(a1.damage)}`);
  }
  // the report renders the planned run
  const html = join(dir, 'report.html');
  const rep = await luna(['report', tr('s1'), '-o', html], { timeoutMs: 60_000 });
  assertOk(rep);
  const page = readFileSync(html, 'utf8');
  assert.match(page, /<html/i);
  // the critical path's last steps are the stencil's last (planned) steps, of either column
  // (which one ends last is timing); the whole path is listed, step by step, as SLOW counts it
  assert.match(page, /[ab]\[1\d\d\]|1_1\d\d_[01]/, 'the report names no planned step');
  const listed = /data-path-cfs="(\d+)"/.exec(page);
  assert.ok(listed, 'the report lists no critical path');
  assert.equal(Number(listed[1]), (await slow(tr('s1'))).criticalPath.cfs, 'the report\'s critical path against SLOW\'s');
});
