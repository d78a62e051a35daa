// Loop plans (src/runtime/node/loop-plan.ts): which loops qualify, from the compiled
// expressions' affine forms, and what the plan says of each input (an earlier step's output at
// a fixed distance, or from outside) and each output (read only inside, or escaping with the
// rest of its req_count). Refusals must be sound: anything not proven falls back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileFrontEnd, renderDiagnostics } from '../../src/lang/index.js';
import { compileProgram, type CompiledProgram, type ForSite } from '../../src/program/compile.js';
import { familyKey } from '../../src/core/dfkey.js';
import { escapes, internalReads, planLoop, type LoopPlan } from '../../src/runtime/node/loop-plan.js';

function compile(source: string): CompiledProgram {
  const r = compileFrontEnd('t.fa', { source });
  assert.ok(r.program, renderDiagnostics(r.diagnostics, r.pre));
  return compileProgram(r.program, () => ({ file: 't.fa', line: 1, col: 1 }) as never);
}

const IMPORTS = `
import c_one(int \`k, name \`o) as one;
import c_two(value \`a, value \`b, name \`o) as two;
import c_cp(value \`a, name \`o) as cp;
import c_show(value \`a) as show;
`;

/** Plan the first `for` of main with main's DFs declared in its env and `args` as its parameters. */
function plan(body: string, args: Record<string, number> = {}, lanes = 2): LoopPlan | string {
  const p = compile(`${IMPORTS}\nsub main(int n, int m) {\n df v, w;\n${body}\n}`);
  const loop = p.main.body.stmts.find((s): s is ForSite => s.kind === 'for');
  assert.ok(loop, 'a for loop');
  const env = new Array<unknown>(p.main.frameSize + 8);
  for (const prm of p.main.params) env[prm.slot] = args[prm.name];
  for (const d of p.main.body.dfs) env[d.slot] = familyKey(d.name, '');
  const first = (loop.first.lin ? loop.first.lin.k + loop.first.lin.terms.reduce((s, t) => s + t.c * (env[t.slot] as number), 0) : NaN);
  const last = (loop.last.lin ? loop.last.lin.k + loop.last.lin.terms.reduce((s, t) => s + t.c * (env[t.slot] as number), 0) : NaN);
  return planLoop(loop, env, first, last, lanes);
}

const STENCIL = `
 for t = 1..n-2 {
  cf task[t][0]: two(v[t - 1][0], v[t - 1][1], v[t][0]) @ { req_count v[t][0] = 2; };
  cf task[t][1]: two(v[t - 1][0], v[t - 1][1], v[t][1]) @ { req_count v[t][1] = 2; };
 }`;

test('a stencil: inputs at distance 1, the first step from outside, the last outputs escape', () => {
  const p = plan(STENCIL, { n: 10 });
  assert.ok(typeof p !== 'string', String(p));
  assert.equal(p.first, 1);
  assert.equal(p.last, 8);
  assert.equal(p.depth, 1);
  assert.deepEqual(p.sites.map((s) => s.lane), [0, 1]);
  for (const s of p.sites) {
    assert.deepEqual(s.inputs.map((i) => i.from), [{ site: 0, out: 0, d: 1 }, { site: 1, out: 0, d: 1 }]);
    assert.equal(s.readers[0]!.length, 2);
  }
  // v[t][j] is read twice inside up to t = 7; v[8][j] by nothing inside: it escapes with its whole count
  assert.equal(internalReads(p, 0, 0, 7), 2);
  assert.equal(escapes(p, 0, 0, 7), -2);
  assert.equal(internalReads(p, 1, 0, 8), 0);
  assert.equal(escapes(p, 1, 0, 8), 2);
});

test('a chain with its offset a parameter; an unlimited output always escapes', () => {
  const p = plan(`for i = 0..n-1 cf link[i]: cp(v[i + m], v[i + m + 1]) @ { req_count v[i + m + 1] = 1; };`, { n: 5, m: 3 });
  assert.ok(typeof p !== 'string', String(p));
  assert.deepEqual(p.sites[0]!.inputs[0]!.from, { site: 0, out: 0, d: 1 });
  assert.equal(escapes(p, 0, 0, 2), -2);
  assert.equal(escapes(p, 0, 0, 4), 1);
  const u = plan(`for i = 0..n-1 cf link[i]: cp(v[i], v[i + 1]);`, { n: 5, m: 0 });
  assert.ok(typeof u !== 'string', String(u));
  assert.equal(escapes(u, 0, 0, 1), -1);
});

test('distances of 2 and coefficients of 2; inputs never written inside are refused', () => {
  const p = plan(`for i = 2..n cf s[i]: two(v[2*i - 4], v[2*i - 2], v[2*i]) @ { req_count v[2*i] = 2; };`, { n: 9, m: 0 });
  assert.ok(typeof p !== 'string', String(p));
  assert.deepEqual(p.sites[0]!.inputs.map((i) => i.from), [{ site: 0, out: 0, d: 2 }, { site: 0, out: 0, d: 1 }]);
  assert.equal(p.depth, 2);
  assert.equal(escapes(p, 0, 0, 8), 1);
  assert.equal(escapes(p, 0, 0, 9), 2);
  // an odd offset with coefficient 2 never meets the outputs: read from outside at every step
  assert.match(String(plan(`for i = 2..n cf s[i]: two(v[2*i - 3], v[2*i - 2], v[2*i]);`, { n: 9, m: 0 })), /outside the loop at every step/);
  assert.match(String(plan(`for i = 2..n cf s[i]: two(v[2*i - 2], w[i], v[2*i]);`, { n: 9, m: 0 })), /outside the loop at every step/);
});

test('refusals: what the plan cannot prove falls back', () => {
  const refused = (body: string, why: RegExp, lanes = 2): void => {
    const p = plan(body, { n: 10, m: 2 }, lanes);
    assert.equal(typeof p, 'string', `planned: ${body}`);
    assert.match(p as string, why);
  };
  refused(`for i = 0..n cf s[i]: cp(v[i], v[i+1]);`, /2 worker lanes/, 1);
  refused(`for i = 0..n cf s[i]: cp(v[i * i], v[i+1]);`, /not affine/);
  refused(`for i = 0..n cf s[i]: cp(v[i / 2], v[i+1]);`, /not affine/);
  refused(`for i = 0..n cf s[i]: cp(v[w[i]], v[i+1]);`, /not affine/);
  refused(`for i = 0..n cf s[i]: cp(v[2 * i], v[i+1]);`, /no fixed distance/);
  refused(`for i = 0..n cf s[i]: cp(v[i + 1], v[i]);`, /later step/);
  refused(`for i = 0..n cf s[i]: cp(w[i], v[0]);`, /same DF at every iteration/);
  refused(`for i = 0..n { cf a[i]: cp(w[i], v[i]); cf b[i]: cp(w[i], v[i]); }`, /two outputs/);
  refused(`for i = 0..n { cf a[i]: cp(w[i], v[i+1]); cf b[i]: cp(v[i+1], w[i]); }`, /later step/);
  refused(`for i = 0..n cf s[i]: two(v[i], v[i], v[i+1]) @ { req_count v[i+1] = 1; };`, /more often than its req_count/);
  refused(`for i = 0..n { cp(v[i], v[i+1]); for j = 0..2 show(v[j]); }`, /not a call/);
  refused(`for i = 0..n { df t; cp(v[i], t); }`, /declares DFs/);
  refused(`for i = 0..n cf s[i]: cp(v[i], v[i+1]) @ { req_count v[i+1] = n; };`, /not constant/);
  refused(`for i = 0..n cf s[i]: one(v[i] + 1, v[i+1]);`, /affine int or a parameter/);
  refused(`for i = 0..n cf s[i]: cp(v[i], v[i+1]) @ { request w[0]; };`, /requests/);
  refused(`for i = 0..n cf s[i]: cp(v[i], v[i+1]) @ { priority: i; };`, /ordered/);
  // an index past int32 at the loop's end: the closures would wrap
  refused(`for i = 0..n cf s[i]: cp(v[i * 1000000000], v[i+1]);`, /not affine/);
});

test('a later statement may read an earlier one of the same iteration (distance 0)', () => {
  const p = plan(`for i = 0..n { cf a[i]: cp(v[i], w[i]) @ { req_count w[i] = 1; }; cf b[i]: cp(w[i], v[i+1]) @ { req_count v[i+1] = 1; }; }`, { n: 4, m: 0 });
  assert.ok(typeof p !== 'string', String(p));
  assert.deepEqual(p.sites[1]!.inputs[0]!.from, { site: 0, out: 0, d: 0 });
  assert.deepEqual(p.sites[0]!.inputs[0]!.from, { site: 1, out: 0, d: 1 });
  assert.equal(escapes(p, 0, 0, 4), -2);
  assert.equal(escapes(p, 1, 0, 4), 1);
});
