// The lanes' rehearsal of building planned steps (exec/plan-steps.ts rehearsePlanSteps): after it,
// LanePlan.build is optimised with the feedback of every path a real plan takes, so that a real
// plan's first windows (values from before the loop, an empty window list, the first window
// dropped) run the optimised code instead of deoptimising it in the span, where TurboFan would
// compile it again on the lanes' cores. V8's optimisation status is read through its natives
// syntax, in a child process started with it (compiling on the main thread, so the status is
// known when read).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';

const PLAN_STEPS = pathToFileURL(join(import.meta.dirname, '..', '..', 'src', 'runtime', 'exec', 'plan-steps.js')).href;

// A child that rehearses, then builds the first windows of a real-shaped plan (Task Bench's
// stencil_1d 1 × 2: iters, v[t-1][0], v[t-1][1], v[t][x]) on lane 0, and prints build's
// optimisation status after the rehearsal and after each window, one per line (V8's bits: 64,
// optimised by TurboFan; 8, deoptimised meanwhile).
const CHILD = `
const { LanePlan, rehearsePlanSteps } = await import(${JSON.stringify(PLAN_STEPS)});
const build = LanePlan.prototype.build;
// one promise callback for every window, the rehearsal's too, as the worker passes
const promised = () => {};
rehearsePlanSteps((lp, w) => lp.build(w, promised), Infinity, structuredClone);
console.log(%GetOptimizationStatus(build));
const site = (x) => ({ imp: 1, lane: x, kinds: [0, 3, 3, 2], a: [0, 0, 0, 0], b: [64, 0, 0, 0], vals: [undefined, undefined, undefined, undefined],
  inputs: [0, 0, 1, 1, 0, 1], readers: [[0, 1, 1, 1]],
  names: [null, { base: 'v#', a: [1, 0], b: [-1, 0] }, { base: 'v#', a: [1, 0], b: [-1, 1] }, { base: 'v#', a: [1, 0], b: [0, x] }] });
const lp = new LanePlan(structuredClone({ loopPlan: { plan: 0, first: 1, last: 998, depth: 1, firstCf: 8, sites: [site(0), site(1)] } }).loopPlan, 0);
const spans = [[1, 8], [9, 40], [41, 200], [201, 700]];
spans.forEach(([first, last], k) => {
  const w = structuredClone({ window: 0, id: 10 + 2 * k, first, last, ids: [10 + 2 * k, 11 + 2 * k],
    outside: k === 0 ? [1, 0, 1, 1, 0, 2] : undefined, outsideVals: k === 0 ? [{ t: 1, v: 0.5 }, { t: 1, v: 0.25 }] : undefined, recycled: undefined });
  const tasks = lp.build(w, promised);
  if (tasks.length !== last - first + 1) throw new Error('window ' + k + ': ' + tasks.length + ' tasks');
  console.log(%GetOptimizationStatus(build));
});
`;

const TURBOFAN = 64, DEOPTIMISED = 8;

test("the lanes' rehearsal leaves LanePlan.build optimised through a real plan's first windows", () => {
  const r = spawnSync(process.execPath, ['--allow-natives-syntax', '--no-concurrent-recompilation', '--input-type=module', '-e', CHILD], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  const status = r.stdout.trim().split('\n').map(Number);
  assert.equal(status.length, 5, r.stdout);
  assert.ok((status[0]! & TURBOFAN) !== 0, `build not optimised by the rehearsal (status ${status[0]})`);
  status.slice(1).forEach((s, k) => {
    assert.ok((s & TURBOFAN) !== 0 && (s & DEOPTIMISED) === 0, `build deoptimised by the real plan's window ${k + 1} (status ${s})`);
  });
});
