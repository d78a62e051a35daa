// An `if` decided where it is spawned (src/runtime/node/fold-if.ts): the same CFs, ids and
// results as when each `if` is a CF of its own (the FIFO order of one lane keeps them so), with
// fewer CFs made and examined; an `if` that reads a DF, carries a rule or fails stays a CF.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileSource, runInProcess, type HarnessRun } from './harness.js';
import { ConditionFrame, decidable } from '../../src/runtime/node/fold-if.js';
import { DefaultPolicy } from '../../src/runtime/policy/default.js';
import { PriorityPolicy } from '../../src/runtime/policy/priority.js';
import type { TraceSink } from '../../src/trace/schema.js';
import type { IfSite } from '../../src/program/compile.js';
import type { DF } from '../../src/ucode/df.js';

const PROGRAM = `
import c_put(int, name) as put;
import c_add(value, value, name) as add;
import c_show(string, value) as show;
sub pair(int k, name res) {
  df y;
  if k > 1 cf big: put(100 * k, y);
  if k <= 1 cf small: put(k, y);
  cf both: add(y, y, res);
}
sub main(int n) {
  df x, s, gate, r;
  cf g: put(1, gate);
  for i = 0..n-1 {
    if i % 2 == 0 cf even[i]: put(i, x[i]);
    if i % 2 == 1 {
      if i > 2 cf odd[i]: put(10 * i, x[i]);
      if i <= 2 cf low[i]: put(-i, x[i]);
    }
    if gate > 0 cf seen[i]: show("seen", x[i]);
    if i == 3 { cf placed[i]: show("placed", x[i]); } @ { locator_cyclic: 0; }
  }
  for j = 0..2 pair(j, r[j]);
  cf s0: add(x[0], x[1], s[0]);
  cf s1: add(x[2], x[3], s[1]);
  cf s2: add(s[0], s[1], s[2]);
  cf total: show("sum", s[2]);
  cf outr: add(r[1], r[2], r[3]);
  cf showr: show("r", r[3]);
}`;

/** The gids of the CFs a node made, by kind: a recorder standing for the node's trace file. */
function recorder(sites: readonly { kind: string }[]): { sink: TraceSink; calls: string[]; made: () => number } {
  const calls: string[] = [];
  let made = 0;
  const sink = new Proxy({}, {
    get: (_t, k) => {
      if (k === 'cfCreated') return (_t0: number, _id: number, _parent: number, site: number, gid: string) => { made++; if (sites[site]?.kind === 'call') calls.push(gid); };
      if (k === 'dfName' || k === 'siteName') return () => 0;
      return () => {};
    },
  }) as TraceSink;
  return { sink, calls, made: () => made };
}

async function run(lanes: number, ordered: boolean): Promise<{ r: HarnessRun; log: string[]; calls: string[]; made: number }> {
  const log: string[] = [];
  const ucodes = {
    c_put: (v: number, x: DF) => { x.setInt(v); },
    c_add: (a: DF, b: DF, out: DF) => { out.setInt(a.getInt() + b.getInt()); },
    c_show: (tag: string, x: DF) => { log.push(`${tag} ${x.getInt()}`); },
  };
  const program = compileSource(PROGRAM, ucodes);
  const rec = recorder(program.sites);
  const r = await runInProcess(program, ucodes, {
    lanes, args: ['6'], trace: () => rec.sink,
    ...(ordered ? { policy: new PriorityPolicy(new DefaultPolicy()) } : {}),
  });
  return { r, log: log.sort(), calls: rec.calls.sort(), made: rec.made() };
}

test('ifs decided where they are spawned: the same atomic CFs, ids and results as ifs run as CFs, fewer CFs made and examined', async () => {
  // one lane in the FIFO order: every if is a CF of its own
  const asCfs = await run(1, false);
  // several lanes ordered by priorities: the ifs the spawner may decide are decided there
  const decided = await run(2, true);
  assert.equal(asCfs.r.ok, true, asCfs.r.message);
  assert.equal(decided.r.ok, true, decided.r.message);
  assert.deepEqual(decided.log, asCfs.log);
  assert.ok(decided.log.includes('sum 31'), decided.log.join(', ')); // x = 0, -1, 2, 30, …
  assert.ok(decided.log.includes('r 402'), decided.log.join(', ')); // r[1] = 1 + 1, r[2] = 200 + 200
  assert.equal(decided.log.filter((l) => l.startsWith('seen')).length, 6);
  assert.deepEqual(decided.calls, asCfs.calls);
  assert.ok(decided.log.includes('placed 30'), decided.log.join(', '));
  // not made: 6 iterations × 2 ifs, the 2 nested in each of the 3 odd ones, 2 in each of the 3
  // subs (the ifs that read a DF or carry a rule stay CFs)
  assert.equal(asCfs.made - decided.made, 24);
  // (how often a waiting CF is examined again depends on the order: fewer, not exactly 24 fewer)
  assert.ok(decided.r.rt.stats.examined < asCfs.r.rt.stats.examined - 12, `${decided.r.rt.stats.examined} against ${asCfs.r.rt.stats.examined}`);
});

test('decidable: an if with no rule of its own and no DF in its body; a condition that reads a DF or fails is left undecided', () => {
  const program = compileSource(`
import c_put(int, name) as put;
sub main(int n) {
  df x;
  if n > 1 cf a: put(1, x[0]);
  if n > 2 { df y; cf b: put(2, y); cf c: put(3, x[1]); }
  if n > 3 { cf d: put(4, x[2]); } @ { priority: n; }
  if n > 4 { cf e: put(5, x[3]); } @ { locator_cyclic: 1; }
  if x[0] > 0 cf f: put(6, x[4]);
  if 10 / (n - 7) > 0 cf g: put(7, x[5]);
}`, { c_put: () => {} });
  const ifs = program.sites.filter((s): s is IfSite => s.kind === 'if');
  assert.deepEqual(ifs.map((s) => decidable(s)), [true, false, false, false, true, true]);
  const c = new ConditionFrame(1, 0);
  const env = new Array<unknown>(program.main.frameSize).fill(undefined);
  const slot = program.main.params[0]!.slot;
  env[slot] = 7;
  assert.equal(c.decide(ifs[0]!, env), true);
  env[slot] = 1;
  assert.equal(c.decide(ifs[0]!, env), false);
  // x[0] is a DF: undecided, the if waits for it as a CF
  env[program.main.body.dfs[0]!.slot] = 'x';
  assert.equal(c.decide(ifs[4]!, env), undefined);
  // a division by zero: undecided, the CF's examination reports it
  env[slot] = 7;
  assert.equal(c.decide(ifs[5]!, env), undefined);
});
