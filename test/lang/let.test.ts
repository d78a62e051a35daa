// let substitution (docs/language.md §4.3.12): the substituted program is printed back as LuNA text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Block, Rule, Stmt, SubDef } from '../../src/lang/ast.js';
import { compileFrontEnd } from '../../src/lang/index.js';
import { parse } from '../../src/lang/parser.js';
import { preprocessText } from '../../src/lang/preprocess.js';
import { originOf } from '../../src/lang/origin.js';
import { printExpr, substituteLet } from '../../src/lang/let.js';

const IMPORTS = 'import c_g(value, name) as g;\nimport c_h(int) as h;\n';

function rule(r: Rule): string {
  switch (r.kind) {
    case 'flags': return r.flags.join(', ');
    case 'expr': return `${r.property}: ${printExpr(r.expr)}`;
    case 'enum': return `${r.property} ${r.items.map((i) => printExpr(i)).join(', ')}`;
    case 'assign': return `${r.property} ${printExpr(r.id)} = ${printExpr(r.value)}`;
    case 'map': return `${r.property} ${printExpr(r.id)} => ${printExpr(r.expr)}`;
  }
}

function rules(rs: Rule[]): string {
  return rs.length ? ` @ { ${rs.map(rule).join('; ')}; }` : '';
}

function block(b: Block): string {
  const dfs = b.dfs.length ? `df ${b.dfs.map((d) => d.name).join(', ')}; ` : '';
  return `{ ${dfs}${b.stmts.map(stmt).join(' ')} }${rules(b.rules)}`;
}

function stmt(s: Stmt): string {
  switch (s.kind) {
    case 'cf': {
      const label = s.label ? `cf ${printExpr(s.label)}: ` : '';
      const set = s.setdfs ? ` >> (${s.setdfs.map((e) => printExpr(e)).join(', ')})` : '';
      const del = s.deletes ? ` --> (${s.deletes.map((e) => printExpr(e)).join(', ')})` : '';
      return `${label}${s.callee}(${s.args.map((e) => printExpr(e)).join(', ')})${set}${del}${rules(s.rules)};`;
    }
    case 'for': return `for ${s.var} = ${printExpr(s.first)}..${printExpr(s.last)} ${block(s.body)}`;
    case 'while': return `while ${printExpr(s.cond)}, ${s.var} = ${printExpr(s.start)}..out ${printExpr(s.out)} ${block(s.body)}`;
    case 'if': return `if ${printExpr(s.cond)} ${block(s.body)}`;
    case 'let': return `let …`;
  }
}

/** Substitutes lets in `main` (given as the body text) and prints main's body. */
function subst(body: string): { text: string; codes: string[] } {
  const { pre } = preprocessText('t.fa', `${IMPORTS}sub main() {\n${body}\n}\n`);
  const parsed = parse(pre);
  assert.deepEqual(parsed.diagnostics, [], 'the test program must parse');
  const r = substituteLet(parsed.program, (p) => originOf(pre, p));
  const main = r.program.items.find((i): i is SubDef => i.kind === 'sub' && i.name === 'main')!;
  return { text: main.body.stmts.map(stmt).join(' '), codes: r.diagnostics.map((d) => `${d.code}@${d.origin?.line}:${d.origin?.col}`) };
}

test('later bindings use earlier ones, as expression trees', () => {
  const r = subst('df N, y; let a = N + 2, b = a * 3 g(b, y);');
  assert.equal(r.text, 'g((N + 2) * 3, y);');
  assert.deepEqual(r.codes, []);
});

test('a name-valued binding used with indices appends them', () => {
  assert.equal(subst('df x; let a = x[1] g(a[2], a[3][4]);').text, 'g(x[1][2], x[1][3][4]);');
});

test('indexing a binding whose value is not a name is an error at the use', () => {
  const r = subst('df y; let a = 3 g(a[1], y);');
  assert.deepEqual(r.codes, ['LUNA-E021@4:19']);
});

test('a rule target bound to a non-name is an error', () => {
  const r = subst('df y; let a = 3 g(y, y) @ { request a; };');
  assert.deepEqual(r.codes, ['LUNA-E022@4:37']);
});

test('every rule is substituted, not only the first (fixes the original)', () => {
  const r = subst('df x, y; let a = 2 g(x, y) @ { locator_cyclic: a + 1; request x[a]; req_count y = a; };');
  assert.equal(r.text, 'g(x, y) @ { locator_cyclic: 2 + 1; request x[2]; req_count y = 2; };');
});

test('map-rule pattern variables are binders, not substituted', () => {
  const r = subst('df x, y; let i = 7, z = x g(x, y) @ { locator_cyclic z[i] => i * 2; };');
  assert.equal(r.text, 'g(x, y) @ { locator_cyclic x[i] => i * 2; };');
});

test('for, while and if headers, labels and >> / --> lists are substituted', () => {
  const r = subst('df x, y, w; let n = 5, t = x {\n for i = 1..n cf lab[n]: g(t[i], y[i]) >> (t[0]) --> (t[n]);\n'
    + ' while t[k] < n, k = n..out w h(k);\n if n > 1 h(n);\n}');
  assert.equal(r.text, 'for i = 1..5 { cf lab[5]: g(x[i], y[i]) >> (x[0]) --> (x[5]); } '
    + 'while x[k] < 5, k = 5..out w { h(k); } if 5 > 1 { h(5); }');
});

test('nested lets see outer bindings; inner declarations shadow them', () => {
  const r = subst('df y; let a = 1 { let b = a + 1 h(b); for a = 0..2 h(a); }');
  assert.equal(r.text, 'h(1 + 1); for a = 0..2 { h(a); }');
});

test('an unused binding is a warning', () => {
  assert.deepEqual(subst('df y; let a = 1, b = 2 h(a);').codes, ['LUNA-W003@4:18']);
});

test('a body declaring dfs runs once: int bindings become for e..e loops', () => {
  const r = subst('df x, y; for j = 0..1 let a = j * 2, b = a + 1, t = x { df tmp; g(t[b], tmp); }');
  assert.equal(r.text, 'for j = 0..1 { for a = j * 2..j * 2 { for b = a + 1..a + 1 { df tmp; g(x[b], tmp); } } }');
});

test('a body declaring dfs with only non-int bindings goes into `if 1`', () => {
  const r = subst('df x, y; let t = x, r = 1.5 { df tmp; g(t[0] + r, tmp); }');
  assert.equal(r.text, 'if 1 { df tmp; g(x[0] + 1.5, tmp); }');
});

test('a body with behaviour rules keeps them on a container', () => {
  const r = subst('df x; let n = 2 { g(x[n], x[n + 1]); } @ { locator_cyclic x[i] => i + n; }');
  assert.equal(r.text, 'if 1 { g(x[2], x[2 + 1]); } @ { locator_cyclic x[i] => i + 2; }');
});

test('no let survives, and the result passes the checker', () => {
  const r = compileFrontEnd('test/lang/fixtures-check/valid/lets.fa');
  assert.deepEqual(r.diagnostics, []);
  assert.ok(r.program);
  assert.ok(!JSON.stringify(r.program).includes('"kind":"let"'));
});

test('errors inside a let value are reported once, at the value', () => {
  const src = `${IMPORTS}sub main() {\n df y;\n let a = zz + 1 { g(a, y); g(a, y); }\n}\n`;
  const r = compileFrontEnd('t.fa', { source: src });
  assert.deepEqual(r.diagnostics.map((d) => `${d.code}@${d.origin?.line}:${d.origin?.col}`), ['LUNA-E002@5:10']);
});

test('printExpr parenthesises only where needed', () => {
  const { pre } = preprocessText('t.fa', `${IMPORTS}sub main() { df x, y; g(a - (b - c) * -(d + 1) + (p ? q : (r ? s : t)), y); }\n`);
  const main = parse(pre).program.items.find((i): i is SubDef => i.kind === 'sub')!;
  const s = main.body.stmts[0]!;
  assert.equal(s.kind === 'cf' && printExpr(s.args[0]!), 'a - (b - c) * -(d + 1) + (p ? q : (r ? s : t))');
});
