// Weights of a rearrangement in LuNA (docs/language.md §9.11): `rearrange(P, first, last, t)
// @ { weights: W; }` gives node first+i a share in proportion to W's i-th number. Every misuse is
// one positioned LUNA-E032; run for real on 2 and 3 in-process nodes, the blocks hold the shares
// the weights ask (counts); a wrong length or a bad weight stops the run naming the array, the
// CF and its line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileFrontEnd, renderDiagnostics, type CfStmt, type Diagnostic } from '../../src/lang/index.js';
import { dynamicArrays } from '../../src/runtime/dda/index.js';
import { shares } from '../../src/runtime/dda/plan.js';
import { fixture, runWithResource } from '../ucode/fixtures.js';

const H = 'import c_v(value) as v;\nimport c_o(name) as o;\nimport c_b(block) as b1;\n';
const show = (d: Diagnostic): string => `${d.code}@${d.origin ? `${d.origin.line}:${d.origin.col}` : '-'}`;
const compile = (source: string) => compileFrontEnd('t.fa', { source });

/** Exactly one diagnostic, `code`, where `§` marks. */
function only(code: string, marked: string): Diagnostic {
  const k = marked.indexOf('§');
  const before = marked.slice(0, k).split('\n');
  const where = `${before.length}:${before[before.length - 1]!.length + 1}`;
  const r = compile(marked.replace('§', ''));
  assert.deepEqual(r.diagnostics.map(show), [`${code}@${where}`], renderDiagnostics(r.diagnostics, r.pre));
  return r.diagnostics[0]!;
}
const main = (body: string): string => `${H}sub main(int k) {\n  df w, t, n;\n  dynamic P(8);\n${body}\n}\n`;

test('E032 weights anywhere but on the runtime\'s rearrange', () => {
  assert.match(only('LUNA-E032', main('  global_count(P, n) @ { §weights: w; };')).message, /'weights' is a recommendation of the runtime's 'rearrange' \(its shares in proportion\); 'global_count' takes none/);
  only('LUNA-E032', main('  v(w) @ { §weights: w; };'));
  only('LUNA-E032', main('  send_by(P, w, n) @ { §weights: w; };'));
  // a program's own rearrange is an ordinary import: no weights either
  only('LUNA-E032', `import c_r(value) as rearrange;\n${main('  rearrange(w) @ { §weights: w; };')}`);
});

test('E032 weights in another form than `weights: DF;`, or twice', () => {
  assert.match(only('LUNA-E032', main('  rearrange(P, 0, 1, t) @ { §weights; };')).message, /write 'weights: W;'/);
  only('LUNA-E032', main('  rearrange(P, 0, 1, t) @ { §weights w; };'));
  assert.match(only('LUNA-E032', main('  rearrange(P, 0, 1, t) @ { weights: w; §weights: w; };')).message, /'weights' is given twice/);
});

test('E032 weights that are not a DF holding numbers', () => {
  assert.match(only('LUNA-E032', main('  rearrange(P, 0, 1, t) @ { weights: §2; };')).message, /a DF holding one positive number per node \(set by a ucode\), not an expression/);
  only('LUNA-E032', main('  rearrange(P, 0, 1, t) @ { weights: §w + 1; };'));
  assert.match(only('LUNA-E032', main('  rearrange(P, 0, 1, t) @ { weights: §k; };')).message, /not 'k', a plain int/);
  assert.match(only('LUNA-E032', main('  rearrange(P, 0, 1, t) @ { weights: §P; };')).message, /not 'P', a dynamic array/);
  only('LUNA-E002', main('  rearrange(P, 0, 1, t) @ { weights: §nope; };'));
  // a near-miss of the rule's name is a warning, as for every rule
  only('LUNA-W005', main('  o(w);\n  rearrange(P, 0, 1, t) @ { §weight: w; };\n  v(t);'));
});

test('weights: a DF, an element of a DF family or a sub\'s DF parameter; lowered to an input of the CF', () => {
  const src = `${H}sub f(value Q, value W) {\n  df t;\n  rearrange(Q, 0, 1, t) @ { weights: W; neighbours; };\n  v(t);\n}\nsub main() {\n  df w, t;\n  dynamic P(8);\n  o(w[3]);\n  rearrange(P, 0, 1, t) @ { weights: w[3]; request t; };\n  f(P, w[3]);\n}\n`;
  const r = compile(src);
  assert.deepEqual(r.diagnostics.map(show), [], renderDiagnostics(r.diagnostics, r.pre));
  const subs = r.program!.items.flatMap((i) => (i.kind === 'sub' ? [i] : []));
  const call = (name: string): CfStmt => subs.find((s) => s.name === name)!.body.stmts.find((s): s is CfStmt => s.kind === 'cf' && s.callee === 'rearrange')!;
  const args = (s: CfStmt): unknown[] => s.args.map((a) => (a.kind === 'int' ? a.value : a.kind === 'id' ? `${a.name}${a.indices.length ? '[]' : ''}` : a.kind));
  // flags: 2 weighted, 1 neighbours; the weights' DF is the last argument; the rule is gone
  assert.deepEqual(args(call('main')), ['P', 0, 1, 't', 2, 'w[]']);
  assert.deepEqual(args(call('f')), ['Q', 0, 1, 't', 3, 'W']);
  assert.ok(!call('main').rules.some((x) => x.kind === 'expr' && x.property === 'weights'));
  assert.ok(call('main').rules.some((x) => x.kind === 'enum' && x.property === 'request'));
  // without weights: equal shares, flag 0, no DF
  const plain = compile(main('  rearrange(P, 0, 1, t);\n  v(t);')).program!;
  const s = plain.items.flatMap((i) => (i.kind === 'sub' ? i.body.stmts : [])).find((x): x is CfStmt => x.kind === 'cf' && x.callee === 'rearrange')!;
  assert.deepEqual(args(s), ['P', 0, 1, 't', 0, 0]);
});

// ------------------------------------------------------------------------------------ running

const UCODES = `
export function c_fill(P, n, done) {
  if (P.getMaxNumel() - P.getNumel() < n) P.resize((P.getNumel() + n) * P.getElsize());
  const v = P.addElement(n);
  const f = new Float64Array(v.buffer, v.byteOffset, n);
  for (let i = 0; i < n; i++) f[i] = i;
  done.setInt(P.getNumel());
}
export function c_weights(text, W) { W.setValue(JSON.parse(text)); }
export function c_weights64(text, W) { const a = JSON.parse(text); const b = W.create(8 * a.length); new Float64Array(b.buffer, b.byteOffset, a.length).set(a); }
export function c_sum(P, t, s) { let x = 0; for (const v of P.f64()) x += v; s.setReal(x); }
export function c_show(tag, x) { console.log(tag + ' ' + x.getInt()); }
`;

const program = (weights: string, nodes: number, make = 'weights'): string => `
import c_fill(block \`P, int \`n, name \`done) as fill;
import c_${make}(string \`text, name \`W) as mk;
import c_sum(block \`P, value \`t, name \`s) as sum;
import c_show(string \`tag, value \`x) as show;
sub main(int n)
{
    df done, W, t, s;
    dynamic P(8);
    fill(P, n, done);
    mk("${weights}", W);
    cf move: rearrange(P, 0, ${nodes - 1}, t) @ { weights: W; request done; };
    for k = 0..${nodes - 1}
        sum(P, t, s[k]) @ { locator_cyclic: k; };
    show("t", t);
}
`;

for (const [nodes, weights, make] of [[2, [1, 3], 'weights'], [3, [5, 1, 2], 'weights'], [3, [0.5, 0.25, 0.25], 'weights64']] as const) {
  test(`weights ${JSON.stringify(weights)} on ${nodes} in-process nodes (${make === 'weights' ? 'an array of numbers' : 'float64s'}): each block holds its weighted share, nothing lost`, async (t) => {
    const n = 1000;
    const dir = fixture(t, { 'prog.fa': program(JSON.stringify(weights).replaceAll('"', ''), nodes, make), 'ucodes.ts': UCODES });
    const layer = dynamicArrays();
    const ran = await runWithResource(dir, { nodes, threads: 1, args: [String(n)], layers: [layer] });
    for (const r of ran.results) assert.equal(r.ok, true, r.message);
    const counts = layer.nodes.map((d) => d.block('P').getNumel());
    assert.deepEqual(counts, shares(n, [...Array(nodes).keys()], weights));
    // the shares are in proportion: 1:3 of 1000 is 250/750
    if (nodes === 2) assert.deepEqual(counts, [250, 750]);
    // every element once
    const all = layer.nodes.flatMap((d) => [...d.block('P').f64()]).sort((a, b) => a - b);
    assert.deepEqual(all, Array.from({ length: n }, (_, i) => i));
  });
}

for (const [what, weights, message] of [
  ['a wrong number of weights', '[1, 2, 3]', /rearrange\(P, 0, 1\) @ \{ weights: W; \}: 3 weight\(s\) for 2 node\(s\): one per node/],
  ['a weight that is zero', '[1, 0]', /node 1's weight is 0; each must be a positive finite number/],
  ['weights that are no array', '7', /W holds a js; the weights are an array of numbers or float64s, one per node/],
] as const) {
  test(`${what} stops the run naming the array, the CF and its line`, async (t) => {
    const dir = fixture(t, { 'prog.fa': program(weights, 2), 'ucodes.ts': UCODES });
    const ran = await runWithResource(dir, { nodes: 2, threads: 1, args: ['10'], layers: [dynamicArrays()] });
    const failed = ran.results.find((r) => !r.ok);
    assert.ok(failed, 'the run fails');
    assert.match(failed.message ?? '', message);
    assert.match(failed.message ?? '', /\bmove\b/);
    assert.match(failed.message ?? '', /prog\.fa:12/);
  });
}
