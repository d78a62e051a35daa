// Dynamic arrays in the language (docs/language.md §9.11): every misuse of a declaration, of the
// array's name and of its operations is one positioned diagnostic (`§` marks where it must
// point); valid programs come out clean; the lowering gives plain LuNA.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileFrontEnd, renderDiagnostics, type CfStmt, type Diagnostic, type Program } from '../../src/lang/index.js';
import { compileProgram } from '../../src/program/compile.js';
import { BLOCK_OF, DYNAMIC_DECLARATION, GLOBAL_COUNT, REARRANGE } from '../../src/core/builtins.js';

const H = [
  'import c_b(block) as b1;',
  'import c_v(value) as v;',
  'import c_o(name) as o;',
  'import c_n(int) as n1;',
  'import c_bv(block, value, name) as bv;',
].join('\n') + '\n';

const show = (d: Diagnostic): string => `${d.code}@${d.origin ? `${d.origin.line}:${d.origin.col}` : '-'}`;
const compile = (source: string) => compileFrontEnd('t.fa', { source });

function only(code: string, marked: string): Diagnostic {
  const k = marked.indexOf('§');
  assert.ok(k >= 0 && marked.indexOf('§', k + 1) < 0, 'exactly one marker');
  const before = marked.slice(0, k).split('\n');
  const where = `${before.length}:${before[before.length - 1]!.length + 1}`;
  const r = compile(marked.replace('§', ''));
  assert.deepEqual(r.diagnostics.map(show), [`${code}@${where}`], renderDiagnostics(r.diagnostics, r.pre));
  assert.equal(r.program === null, code.startsWith('LUNA-E') || code.startsWith('LUNA-S'));
  return r.diagnostics[0]!;
}

const clean = (source: string): Program => {
  const r = compile(source);
  assert.deepEqual(r.diagnostics.map(show), [], renderDiagnostics(r.diagnostics, r.pre));
  return r.program!;
};

const main = (body: string): string => `${H}sub main(int k) {\n  df x, t;\n${body}\n}\n`;

// ------------------------------------------------------------------------------ declarations

test('E028 an element size that is a real, a string, zero or negative', () => {
  assert.match(only('LUNA-E028', main('  dynamic P(§2.5);\n  b1(P);')).message, /element size \(bytes\) of dynamic array 'P' must be an int, not a real/);
  assert.match(only('LUNA-E028', main('  dynamic P(§"16");\n  b1(P);')).message, /must be an int, not a string/);
  assert.match(only('LUNA-E028', main('  dynamic P(§0);\n  b1(P);')).message, /is 0; it must be positive/);
  assert.match(only('LUNA-E028', main('  dynamic P(§-8);\n  b1(P);')).message, /is -8; it must be positive/);
  // an int expression over parameters and DFs is checked when it runs
  clean(main('  dynamic P(8 * k + x);\n  b1(P);'));
});

test('E028 a recommendation the declaration does not take, or a bad one', () => {
  assert.match(only('LUNA-E028', main('  dynamic P(8) @ { §stealable; };\n  b1(P);')).message, /'stealable' is no recommendation of dynamic array 'P': it takes 'ordered;' or 'unordered;', 'capacity: n;', 'home: k;' and 'blocks: b;'/);
  only('LUNA-E028', main('  dynamic P(8) @ { §locator_cyclic: 1; };\n  b1(P);'));
  only('LUNA-E028', main('  dynamic P(8) @ { §request x; };\n  b1(P);'));
  assert.match(only('LUNA-E028', main('  dynamic P(8) @ { capacity: §1.5; };\n  b1(P);')).message, /'capacity' \(elements\) of dynamic array 'P' must be an int, not a real/);
  assert.match(only('LUNA-E028', main('  dynamic P(8) @ { home: §-1; };\n  b1(P);')).message, /'home' node of dynamic array 'P' is -1; it must be zero or more/);
  assert.match(only('LUNA-E028', main('  dynamic P(8) @ { blocks: §0; };\n  b1(P);')).message, /'blocks' \(a node\) of dynamic array 'P' is 0; it must be positive/);
  assert.match(only('LUNA-E028', main('  dynamic P(8) @ { blocks: §2.5; };\n  b1(P);')).message, /'blocks' \(a node\) of dynamic array 'P' must be an int, not a real/);
  assert.match(only('LUNA-E028', main('  dynamic P(8) @ { blocks: 2; §blocks: 3; };\n  b1(P);')).message, /'blocks' is recommended twice/);
  assert.match(only('LUNA-E028', main('  dynamic P(8) @ { ordered; §unordered; };\n  b1(P);')).message, /an order \(ordered\/unordered\) is recommended twice/);
  assert.match(only('LUNA-E028', main('  dynamic P(8) @ { capacity: 4; §capacity: 5; };\n  b1(P);')).message, /'capacity' is recommended twice/);
  // names in the recommendations are checked like any expression
  only('LUNA-E002', main('  dynamic P(8) @ { capacity: §nope; };\n  b1(P);'));
  clean(main('  dynamic P(8) @ { ordered; capacity: 4 * k; home: k - 1; blocks: k + 1; };\n  b1(P);'));
});

test('E028 a dynamic array named twice in one block', () => {
  assert.match(only('LUNA-E028', main('  dynamic §x(8);\n  b1(x);')).message, /'x' is declared twice in this block \(previous at t\.fa:7:6\); a dynamic array needs a name of its own/);
  only('LUNA-E028', main('  dynamic P(8);\n  dynamic §P(16);\n  b1(P);'));
  // an inner block may declare its own
  clean(main('  dynamic P(8);\n  b1(P);\n  if k > 0 {\n    dynamic P(16);\n    b1(P);\n  }'));
});

test('S001 a declaration takes one element size and ends with ;', () => {
  assert.match(only('LUNA-S001', main('  dynamic P(8§, 2);\n  b1(P);')).message, /a dynamic array takes its element size in bytes; the rest are recommendations/);
  only('LUNA-S001', main('  dynamic P(8)\n  §b1(P);'));
});

// --------------------------------------------------------------------------- the array's name

test('E030 a dynamic array takes no index, but one naming its block as a block argument', () => {
  assert.match(only('LUNA-E030', main('  dynamic P(8);\n  v(§P[1]);')).message, /'P' is a dynamic array, one array over the nodes, not a family of DFs: it takes no index \(but 'P\[j\]' as an import's block argument: its node's block j\)/);
  only('LUNA-E030', main('  dynamic P(8);\n  global_count(§P[1], t);\n  v(t);'));
  // to a block parameter: one int index, not a negative literal
  assert.match(only('LUNA-E030', main('  dynamic P(8) @ { blocks: 2; };\n  b1(§P[1][0]);')).message, /'P\[…\]' names one block of dynamic array 'P' on the CF's node: it takes one index, not 2/);
  assert.match(only('LUNA-E030', main('  dynamic P(8) @ { blocks: 2; };\n  b1(P[§1.5]);')).message, /the block of dynamic array 'P' is named by an int \(0 ≤ j < its blocks a node\), not a real/);
  assert.match(only('LUNA-E030', main('  dynamic P(8) @ { blocks: 2; };\n  b1(P[§-1]);')).message, /block -1 of dynamic array 'P': blocks are numbered from 0/);
  only('LUNA-E002', main('  dynamic P(8) @ { blocks: 2; };\n  b1(P[§j]);'));
  clean(main('  dynamic P(8) @ { blocks: 2; };\n  b1(P[1]);\n  for j = 0..1\n    bv(P[j], x, t[j]);'));
});

test('E031 a dynamic array is neither an output, nor a number, nor destroyed', () => {
  assert.match(only('LUNA-E031', main('  dynamic P(8);\n  o(§P);')).message, /'P' is a dynamic array, set by its declaration: it cannot be an output of 'o'/);
  assert.match(only('LUNA-E031', main('  dynamic P(8);\n  n1(§P + 1);')).message, /'P' is a dynamic array: it has no value to compute with/);
  only('LUNA-E031', main('  dynamic P(8);\n  v(§P * 2);'));
  only('LUNA-E031', main('  dynamic P(8);\n  b1(P) >> (§P);'));
  only('LUNA-E031', main('  dynamic P(8);\n  b1(P) --> (§P);'));
  only('LUNA-E031', main('  dynamic P(8);\n  b1(P) @ { delete §P; };'));
  only('LUNA-E031', main('  dynamic P(8);\n  b1(P) @ { req_count §P = 2; };'));
  only('LUNA-E031', main('  dynamic P(8);\n  b1(P) @ { locator_cyclic: §P; };'));
  only('LUNA-E031', main('  dynamic P(8);\n  b1(P);\n  if §P {\n    v(x);\n  }'));
  // whole, to a block, a value, a sub's name or block parameter, and as a request, it is fine
  clean(`${H}sub f(block Q) b1(Q);\nsub g(name Q) v(Q);\nsub main() {\n  dynamic P(8);\n  b1(P) @ { request P; };\n  v(P);\n  f(P);\n  g(P);\n}\n`);
});

// ------------------------------------------------------------------------------- operations

test('E029 rearrange and global_count act on a dynamic array', () => {
  assert.match(only('LUNA-E029', main('  rearrange(§x, 0, 1, t);')).message, /'rearrange' acts on a dynamic array: its first argument must be a name declared by 'dynamic' \(or a DF parameter holding one\), not 'x', a df of a df line/);
  assert.match(only('LUNA-E029', main('  global_count(§k, t);')).message, /not 'k', a plain int/);
  assert.match(only('LUNA-E029', main('  global_count(§x + 1, t);')).message, /not an expression/);
  assert.match(only('LUNA-E029', `${H}sub f(value Q) global_count(§Q[2], Q);\nsub main() {\n  dynamic P(8);\n  f(P);\n}\n`).message, /not an element of 'Q'/);
  // a DF parameter of a sub may hold an array
  clean(`${H}sub f(value Q) {\n  df n;\n  global_count(Q, n);\n  v(n);\n}\nsub main() {\n  dynamic P(8);\n  f(P);\n}\n`);
});

test('E029 send_by acts on a dynamic array; with one it is clean', () => {
  assert.match(only('LUNA-E029', main('  send_by(§x, t, t);')).message, /'send_by' acts on a dynamic array: its first argument must be a name declared by 'dynamic' \(or a DF parameter holding one\), not 'x', a df of a df line/);
  clean(`${H}sub main() {\n  df d, n;\n  dynamic P(8);\n  send_by(P, d, n);\n  v(n);\n}\n`);
});

test('E004, E006, E011 for the operations\' other arguments', () => {
  assert.match(only('LUNA-E004', main('  dynamic P(8);\n  §rearrange(P, 0, t);')).message, /'rearrange' takes 4 argument\(s\), 3 given/);
  only('LUNA-E006', main('  dynamic P(8);\n  rearrange(P, 0, 1, §t + 1);'));
  only('LUNA-E011', main('  dynamic P(8);\n  rearrange(P, §"0", 1, t);'));
  only('LUNA-E004', main('  dynamic P(8);\n  §global_count(P);'));
});

test('a program\'s own rearrange, global_count or dynamic keeps its meaning', () => {
  const p = clean(`${H}import c_r(int, int) as rearrange;\nimport c_d(value) as dynamic;\nsub main() {\n  df dynamic_, x;\n  rearrange(1, 2);\n  dynamic(x);\n  global_count(P, x);\n  dynamic P(8);\n}\n`);
  const calls = (p.items.find((i) => i.kind === 'sub')!.body.stmts as CfStmt[]).map((s) => `${s.callee}/${s.args.length}`);
  assert.deepEqual(calls, ['rearrange/2', 'dynamic/1', 'global_count/2', `${DYNAMIC_DECLARATION.alias}/6`]);
  const imports = p.items.flatMap((i) => (i.kind === 'import' ? [`${i.alias}=${i.code}`] : []));
  assert.ok(imports.includes('rearrange=c_r') && !imports.includes(`rearrange=${REARRANGE.symbol}`), imports.join());
  assert.ok(imports.includes(`global_count=${GLOBAL_COUNT.symbol}`), imports.join());
  // a DF may be called dynamic
  clean(`${H}sub main() {\n  df dynamic;\n  o(dynamic);\n  v(dynamic);\n}\n`);
});

// --------------------------------------------------------------------------------- lowering

test('the lowering appends one declaration CF per array to its block and binds the operations', () => {
  const source = `${H}sub main(int n) {\n  df made, t, c;\n  dynamic P(16) @ { ordered; capacity: n; home: 1; };\n  o(made);\n  rearrange(P, 0, 1, t) @ { neighbours; request made; };\n  global_count(P, c) @ { request t; };\n  for i = 0..1 {\n    dynamic Q(8);\n    b1(Q);\n  }\n}\n`;
  const program = clean(source);
  const body = program.items.find((i) => i.kind === 'sub' && i.name === 'main')!;
  assert.equal(body.kind, 'sub');
  if (body.kind !== 'sub') return;
  const stmts = body.body.stmts;
  // the declarations come last: the statements written keep their spawn numbers
  assert.deepEqual(stmts.map((s) => (s.kind === 'cf' ? s.callee : s.kind)), ['o', 'rearrange', 'global_count', 'for', DYNAMIC_DECLARATION.alias]);
  const decl = stmts[4] as CfStmt;
  assert.deepEqual(decl.args.map((a) => (a.kind === 'id' ? a.name : a.kind === 'int' ? a.value : a.kind)), ['P', 16, 'n', 1, 1, 1]);
  assert.deepEqual((stmts[1] as CfStmt).args.map((a) => (a.kind === 'int' ? a.value : a.kind)), ['id', 0, 1, 'id', 1, 0]);
  const loop = stmts[3]!;
  assert.equal(loop.kind, 'for');
  if (loop.kind === 'for') assert.deepEqual(loop.body.stmts.map((s) => (s.kind === 'cf' ? s.callee : s.kind)), ['b1', DYNAMIC_DECLARATION.alias]);
  // it compiles: the runtime's codes are imports that may wait (so they run on worker threads)
  const compiled = compileProgram(program, () => ({ file: 't.fa', line: 1, col: 1 }));
  const byAlias = new Map(compiled.imports.map((im) => [im.alias, im]));
  for (const b of [DYNAMIC_DECLARATION, REARRANGE, GLOBAL_COUNT]) {
    assert.equal(byAlias.get(b.alias)?.symbol, b.symbol);
    assert.equal(byAlias.get(b.alias)?.waits, true);
  }
  // `P[j]` to a block parameter: a DF of the block set by the runtime's `block of`, appended
  const withBlocks = clean(`${H}sub main(int n) {\n  df t;\n  dynamic P(16) @ { blocks: 3; };\n  for j = 0..2\n    bv(P[j], t, t[j]);\n  b1(P);\n}\n`);
  const mb = withBlocks.items.find((i) => i.kind === 'sub' && i.name === 'main');
  if (mb?.kind !== 'sub') throw new Error('main');
  assert.deepEqual(mb.body.stmts.map((s) => (s.kind === 'cf' ? s.callee : s.kind)), ['for', 'b1', DYNAMIC_DECLARATION.alias]);
  assert.deepEqual((mb.body.stmts[2] as CfStmt).args.map((a) => (a.kind === 'int' ? a.value : a.kind)), ['id', 16, 0, 0, 0, 3]);
  const inner = mb.body.stmts[0]!.kind === 'for' ? mb.body.stmts[0].body : null;
  assert.deepEqual(inner!.stmts.map((s) => (s.kind === 'cf' ? s.callee : s.kind)), ['bv', BLOCK_OF.alias]);
  const [use, of] = inner!.stmts as CfStmt[];
  const tmp = use!.args[0]!;
  assert.ok(tmp.kind === 'id' && tmp.indices.length === 0 && inner!.dfs.some((d) => d.name === tmp.name), 'the block argument is a DF of the loop body');
  assert.deepEqual(of!.args.map((a) => (a.kind === 'id' ? `${a.name}${a.indices.length}` : a.kind)), ['P0', 'j0', `${tmp.kind === 'id' ? tmp.name : ''}0`]);
  assert.equal(compileProgram(withBlocks, () => ({ file: 't.fa', line: 1, col: 1 })).imports.find((im) => im.alias === BLOCK_OF.alias)?.symbol, BLOCK_OF.symbol);
  // a program without dynamic arrays is left alone
  const plain = `${H}sub main() {\n  df x;\n  o(x);\n  v(x);\n}\n`;
  const r = compile(plain);
  assert.equal(r.program!.items.filter((i) => i.kind === 'import').length, 5);
});
