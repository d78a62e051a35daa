// Output rules evaluated once per call site when they cannot differ between its CFs (req_count of
// constants matched to outputs, no drop, no afterpush): one shared array for the site rather
// than one per CF, and the counts still enforced.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CallSite } from '../../src/program/compile.js';
import { compileSource, runInProcess } from '../runtime/harness.js';

const HEAD = 'import start(name `x) as start;\nimport step(value `p, name `n) as step;\nimport take(value `x) as take;\n';
const UCODES = {
  start: (x: { setInt(n: number): void }) => x.setInt(0),
  step: (p: { getInt(): number }, n: { setInt(v: number): void }) => n.setInt(p.getInt() + 1),
  take: () => {},
};

const callSite = (sites: readonly { kind: string }[], imp: string): CallSite =>
  sites.find((s): s is CallSite => s.kind === 'call' && (s as CallSite).imp.symbol === imp)!;

test('which call sites have constant output rules', () => {
  const p = compileSource(`${HEAD}sub main(int n) {
    df x, y, z, w;
    cf a: start(x[0]) @ { req_count x[0] = 2; };
    for i = 0..n-1 cf s[i]: step(x[i], x[i + 1]) @ { req_count x[i + 1] = n; };
    cf b: start(y) @ { req_count y = 1; drop y; };
    cf c: step(y, z) @ { req_count z = 1 + 1; };
    take(x[n]); take(z); start(w);
  }\n`, UCODES);
  const a = p.sites.filter((s): s is CallSite => s.kind === 'call');
  const byLabel = (l: string): CallSite => a.find((s) => s.label === l)!;
  assert.equal(byLabel('a').rulesConstant, true, 'a constant count of its own output');
  assert.equal(byLabel('s').rulesConstant, false, 'a count read from a parameter');
  assert.equal(byLabel('b').rulesConstant, false, 'a drop');
  assert.equal(callSite(p.sites, 'start').sharedRules, null, 'nothing shared before a run');
  assert.equal(byLabel('c').rulesConstant, true, 'a constant expression the compiler folds');
});

test('a chain shares one rules array per site, and its counts still free and refuse', async () => {
  const src = `${HEAD}sub main(int n) {
    df x;
    cf first: start(x[0]) @ { req_count x[0] = 1; };
    for i = 0..n-1 cf link[i]: step(x[i], x[i + 1]) @ { req_count x[i + 1] = 1; };
    take(x[n]);
  }\n`;
  const p = compileSource(src, UCODES);
  const link = p.sites.find((s): s is CallSite => s.kind === 'call' && (s as CallSite).label === 'link')!;
  assert.equal(link.rulesConstant, true);
  const ok = await runInProcess(p, UCODES, { args: ['50'] });
  assert.equal(ok.ok, true, ok.message);
  assert.deepEqual(link.sharedRules, [1], 'the 50 links shared one array holding their count');

  // the same count read twice: the second read is refused, naming the DF
  const twice = compileSource(src.replace('take(x[n]);', 'take(x[n]); take(x[3]);'), UCODES);
  const bad = await runInProcess(twice, UCODES, { args: ['50'] });
  assert.equal(bad.ok, false);
  assert.match(bad.message!, /x\[3\]/);
});
