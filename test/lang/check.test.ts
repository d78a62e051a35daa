// Static checks: one test per diagnostic (exact code, line, column), plus valid programs that
// must come out clean. `§` in a test source marks where the diagnostic must point; it is
// removed before compiling.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { compileFrontEnd, renderDiagnostics, type Diagnostic } from '../../src/lang/index.js';

const H = [
  'import c_v(value) as v;',
  'import c_o(name) as o;',
  'import c_n(int) as n1;',
  'import c_s(string) as s1;',
  'import c_vo(value, name) as vo;',
  'import c_oo(name, name) as oo;',
].join('\n') + '\n';

const show = (d: Diagnostic): string => `${d.code}@${d.origin ? `${d.origin.line}:${d.origin.col}` : '-'}`;

function compile(source: string, ucodeExports?: ReadonlySet<string>) {
  return compileFrontEnd('t.fa', { source, ucodeExports });
}

/** The program (with one `§` marker) gives exactly one diagnostic: `code` at the marker. */
function only(code: string, marked: string, ucodeExports?: ReadonlySet<string>): Diagnostic {
  const k = marked.indexOf('§');
  assert.ok(k >= 0 && marked.indexOf('§', k + 1) < 0, 'exactly one marker');
  const before = marked.slice(0, k).split('\n');
  const where = `${before.length}:${before[before.length - 1]!.length + 1}`;
  const r = compile(marked.replace('§', ''), ucodeExports);
  assert.deepEqual(r.diagnostics.map(show), [`${code}@${where}`], renderDiagnostics(r.diagnostics, r.pre));
  assert.equal(r.program === null, code.startsWith('LUNA-E'));
  return r.diagnostics[0]!;
}

// ------------------------------------------------------------------------- whole program

test('E001 missing main', () => {
  const r = compile(`${H}sub helper() n1(1);\n`);
  assert.deepEqual(r.diagnostics.map(show), ['LUNA-E001@-']);
  assert.equal(r.program, null);
});

test('E017 main parameters must be int, real or string', () => {
  only('LUNA-E017', `${H}sub main(int a, §name b) n1(a);\n`);
});

// ------------------------------------------------------------------------------- names

test('E002 undeclared name in an argument', () => {
  const d = only('LUNA-E002', `${H}sub main() {\n  v(§x);\n}\n`);
  assert.match(d.message, /undeclared name 'x'/);
});

test('E002 undeclared name in an index', () => {
  only('LUNA-E002', `${H}sub main() {\n  df a;\n  v(a[§k]);\n}\n`);
});

test('E002 undeclared name in a rule', () => {
  only('LUNA-E002', `${H}sub main() {\n  df a;\n  v(a) @ { locator_cyclic: §p + 1; };\n}\n`);
});

test('E002 undeclared name in a for bound', () => {
  only('LUNA-E002', `${H}sub main() {\n  df a;\n  for i = 0..§m o(a[i]);\n}\n`);
});

test('E002 subs are closed scopes: no access to the caller\'s dfs', () => {
  only('LUNA-E002', `${H}sub f() v(§a);\nsub main() {\n  df a;\n  o(a);\n  f();\n}\n`);
});

test('E002 a loop variable is not visible after its loop', () => {
  only('LUNA-E002', `${H}sub main() {\n  df a;\n  for i = 0..3 o(a[i]);\n  v(a[§i]);\n}\n`);
});

test('E002 locator rule for a name that is neither a DF nor a label', () => {
  only('LUNA-E002', `${H}sub main() {\n  df a;\n  o(a);\n} @ { locator_cyclic §q[i] => i; }\n`);
});

test('E003 unknown callee', () => {
  only('LUNA-E003', `${H}sub main() {\n  df a;\n  §frob(a);\n}\n`);
});

test('E004 wrong argument count for an import', () => {
  const d = only('LUNA-E004', `${H}sub main() {\n  df a, b;\n  §vo(a, b, b);\n}\n`);
  assert.match(d.message, /takes 2 argument\(s\), 3 given/);
});

test('E004 wrong argument count for a sub', () => {
  only('LUNA-E004', `${H}sub f(int k, name r) n1(k);\nsub main() {\n  §f(1);\n}\n`);
});

// ------------------------------------------------------------------------------- types

test('E005 invalid operation on strings, at the operator', () => {
  const d = only('LUNA-E005', `${H}sub main() {\n  if "a" §>= "b" n1(1);\n}\n`);
  assert.equal(d.message, 'invalid operation on strings: >=');
});

test('E005 unary minus of a string', () => {
  only('LUNA-E005', `${H}sub main() {\n  s1(§-"x");\n}\n`);
});

test('E006 a name parameter needs a DF reference, not an expression', () => {
  only('LUNA-E006', `${H}sub main() {\n  df a;\n  o(§a + 1);\n}\n`);
});

test('E006 a name parameter needs a DF, not a loop variable', () => {
  only('LUNA-E006', `${H}sub f(name r) o(r);\nsub main() {\n  for i = 0..2 f(§i);\n}\n`);
});

test('E006 a block parameter needs the DF that holds the block, not an expression', () => {
  const d = only('LUNA-E006', `${H}import c_b(block) as b;\nsub main() {\n  df a;\n  b(§a + 1);\n}\n`);
  assert.match(d.message, /argument 1 of 'b' is a 'block' parameter: it needs the DF that holds the block/);
});

test('E006 a block parameter needs a DF, not a plain parameter, for imports and subs alike', () => {
  only('LUNA-E006', `${H}import c_b(block) as b;\nsub main(int k) {\n  b(§k);\n}\n`);
  only('LUNA-E006', `${H}import c_b(block) as b;\nsub f(block r) b(r);\nsub main() {\n  for i = 0..2 f(§i);\n}\n`);
});

test('a block parameter of a sub is a DF inside it: indexed, passed on as value or block', () => {
  const r = compile(`${H}import c_b(block, value) as b;\nsub f(block r) { b(r[1], r[2]); v(r); }\nsub main() {\n  df a;\n  f(a);\n}\n`);
  assert.deepEqual(r.diagnostics.map(show), []);
});

test('E027 the same block twice in one call', () => {
  const d = only('LUNA-E027', `${H}import c_bb(block, block) as bb;\nsub main() {\n  df a;\n  bb(a[1], §a[1]);\n}\n`);
  assert.match(d.message, /the same block is passed to 'bb' twice/);
  // two blocks of one family are two blocks
  assert.deepEqual(compile(`${H}import c_bb(block, block) as bb;\nsub main() {\n  df a;\n  bb(a[1], a[2]);\n}\n`).diagnostics.map(show), []);
});

test('E017 main takes no block', () => {
  only('LUNA-E017', `${H}sub main(§block b) v(b);\n`);
});

test('E007 a value parameter given an int literal', () => {
  only('LUNA-E007', `${H}sub main() {\n  v(§5);\n}\n`);
});

test('E007 a value parameter given an int variable', () => {
  only('LUNA-E007', `${H}sub main(int k) {\n  v(§k * 2);\n}\n`);
});

test('E008 real() of an int loop variable', () => {
  only('LUNA-E008', `${H}sub main() {\n  for i = 0..2 v(§real(i));\n}\n`);
});

test('E009 string() casts are not implemented', () => {
  only('LUNA-E009', `${H}sub main() {\n  df a;\n  o(a);\n  s1(§string(a));\n}\n`);
});

test('E010 a real in a string context (argument)', () => {
  only('LUNA-E010', `${H}sub main(real r) {\n  s1(§r);\n}\n`);
});

test('E010 a real in a string concatenation', () => {
  only('LUNA-E010', `${H}sub main() {\n  s1("x=" + §2.5);\n}\n`);
});

test('E011 a string where a number is expected', () => {
  only('LUNA-E011', `${H}sub main() {\n  n1(§"seven");\n}\n`);
});

test('E011 a string index', () => {
  only('LUNA-E011', `${H}sub main() {\n  df a;\n  v(a[§"k"]);\n}\n`);
});

test('E019 a locator target that is a loop variable', () => {
  only('LUNA-E019', `${H}sub main() {\n  df a;\n  for i = 0..1 o(a[i]) @ { locator_cyclic §i => 0; };\n}\n`);
});

test('E023 indexing something that is not a DF', () => {
  only('LUNA-E023', `${H}sub main(int k) {\n  n1(§k[1]);\n}\n`);
});

test('E024 duplicate parameter', () => {
  only('LUNA-E024', `${H}sub f(int k, §int k) n1(k);\nsub main() f(1, 2);\n`);
});

// ------------------------------------------------------------------------- nfparam

test('E012 an nfparam used as an argument', () => {
  only('LUNA-E012', `${H}sub w() {\n  n1(§node);\n} @ { nfparam node; }\nsub main() w() @ { nfparam node => 1; };\n`);
});

test('E013 nfparam map on a call to a sub that does not declare it', () => {
  only('LUNA-E013', `${H}sub w() n1(1);\nsub main() w() @ { nfparam §node => 1; };\n`);
});

// ---------------------------------------------------------------------- DF targets

test('E014 the same output DF twice in one call', () => {
  only('LUNA-E014', `${H}sub main() {\n  df a;\n  oo(a[1], §a[1]);\n}\n`);
});

test('E014 a >> target that is also an output', () => {
  only('LUNA-E014', `${H}sub main() {\n  df a;\n  o(a) >> (§a);\n}\n`);
});

test('E019 a >> target that is not a DF', () => {
  only('LUNA-E019', `${H}sub main() {\n  df a;\n  for i = 0..2 o(a[i]) >> (§i);\n}\n`);
});

test('E019 a --> target that is not a DF', () => {
  only('LUNA-E019', `${H}sub main() {\n  df a;\n  o(a) --> (§7);\n}\n`);
});

test('E019 a request item that is not a DF', () => {
  only('LUNA-E019', `${H}sub main(int k) {\n  df a;\n  o(a) @ { request §k; };\n}\n`);
});

test('E019 a delete item that is not a DF', () => {
  only('LUNA-E019', `${H}sub main(int k) {\n  df a;\n  o(a) @ { delete §k; };\n}\n`);
});

test('E020 a while out target that is not a DF', () => {
  only('LUNA-E020', `${H}sub main(int k) {\n  df a;\n  while j < 3, j = 0..out §k o(a[j]);\n}\n`);
});

test('E018 locator rule index count mismatch', () => {
  const d = only('LUNA-E018', `${H}sub main() {\n  df a;\n  for i = 0..3 o(a[i]);\n} @ { locator_cyclic §a[i][j] => i; }\n`);
  assert.match(d.message, /has 2 index\(es\), but 'a' is used with 1/);
});

test('E018 for a CF label', () => {
  only('LUNA-E018', `${H}sub main() {\n  df a;\n  for i = 0..3 cf p[i]: o(a[i]);\n} @ { locator_cyclic §p => 0; }\n`);
});

// ------------------------------------------------------------------------- ucode and C++

const FOREIGN = 'C++ sub hello(int k) ${{ printf("%d", k); $}}\n';

test('E015 an import without an export in the ucode module', () => {
  only('LUNA-E015', `import §c_f(int) as f;\nsub main() f(1);\n`, new Set(['c_g']));
});

test('W004 an unused import without an export is only a warning', () => {
  only('LUNA-W004', `import §c_f(int) as f;\nimport c_g(int) as g;\nsub main() g(1);\n`, new Set(['c_g']));
});

test('an inline C++ sub needs no TypeScript twin: its body is its implementation (compiled by the loader)', () => {
  assert.deepEqual(compile(`${FOREIGN}sub main() hello(1);\n`, new Set()).diagnostics, []);
});

test('an inline C++ sub with a TypeScript twin is fine', () => {
  assert.deepEqual(compile(`${FOREIGN}sub main() hello(1);\n`, new Set(['hello'])).diagnostics, []);
});

test('a C++ head block is kept for the inline subs, without a diagnostic', () => {
  assert.deepEqual(compile(`C++ head \${{ #include <cstdio> $}}\n${H}sub main() n1(1);\n`).diagnostics, []);
});

// ------------------------------------------------------------------------- duplicates

test('W002 duplicate sub: warning, the later one wins', () => {
  const d = only('LUNA-W002', `${H}sub f() n1(1);\nsub §f(int k) n1(k);\nsub main() f(2);\n`);
  assert.match(d.message, /previous at t\.fa:7:5/);
});

test('W002 an import and a sub with the same name', () => {
  only('LUNA-W002', `${H}sub §v(int k) n1(k);\nsub main() v(2);\n`);
});

test('W002 duplicate df in one block', () => {
  only('LUNA-W002', `${H}sub main() {\n  df a, §a;\n  o(a);\n}\n`);
});

test('a df in an inner block may shadow an outer one', () => {
  assert.deepEqual(compile(`${H}sub main() {\n  df a;\n  o(a);\n  for i = 0..1 { df a; o(a); }\n}\n`).diagnostics, []);
});

// --------------------------------------------------------------------------- reporting

test('all diagnostics of a file, sorted, one per mistake', () => {
  const src = `${H}sub main(int k) {\n  df a;\n  v(zz);\n  frob(a);\n  o(a + 1);\n  v(zz);\n}\n`;
  assert.deepEqual(compile(src).diagnostics.map(show), ['LUNA-E002@9:5', 'LUNA-E003@10:3', 'LUNA-E006@11:5', 'LUNA-E002@12:5']);
});

test('no follow-up errors from an unknown callee or undeclared names', () => {
  const src = `${H}sub main() {\n  frob(1 + zz, "a" + 1.5);\n}\n`;
  assert.deepEqual(compile(src).diagnostics.map(show), ['LUNA-E003@8:3', 'LUNA-E002@8:12', 'LUNA-E010@8:22']);
});

test('renderDiagnostics shows file:line:col, the line and a caret', () => {
  const r = compile(`${H}sub main() {\n  v(x);\n}\n`);
  assert.equal(renderDiagnostics(r.diagnostics, r.pre), [
    "t.fa:8:5: error[LUNA-E002]: undeclared name 'x'",
    '   |',
    ' 8 |   v(x);',
    '   |     ^',
  ].join('\n'));
});

// ------------------------------------------------------------------------ valid programs

const VALID = 'test/lang/fixtures-check/valid';
const EXPORTS: Record<string, string[]> = { 'foreign.fa': ['hello', 'c_print'] };

for (const f of fs.readdirSync(VALID).filter((x) => x.endsWith('.fa')).sort()) {
  test(`valid program ${f} has no errors`, () => {
    const exp = EXPORTS[f];
    const r = compileFrontEnd(path.join(VALID, f), { ucodeExports: exp ? new Set(exp) : undefined });
    const errors = r.diagnostics.filter((d) => d.severity === 'error' || d.code !== 'LUNA-W001');
    assert.deepEqual(errors, [], renderDiagnostics(r.diagnostics, r.pre));
    assert.ok(r.program);
  });
}

// ------------------------------------------------------------- rules after a loop's body

test('the loop variable is visible in the rules after a for or while body (they belong to each iteration)', () => {
  const src = `${H}sub main(int n) {\n  df a, w;\n`
    + '  for i = 0..n-1 { o(a[i]); } @ { locator_cyclic: i; priority: n - i; request a[i]; }\n'
    + '  while j < n, j = 0..out w { v(a[j]); } @ { locator_cyclic: j + 1; locator_cyclic a[q] => j + q; }\n}\n';
  const r = compile(src);
  assert.deepEqual(r.diagnostics, [], renderDiagnostics(r.diagnostics, r.pre));
});

test('E002 the rules of an if belong to the if, outside its block: they do not see its dfs', () => {
  only('LUNA-E002', `${H}sub main(int k) {\n  if k > 0 { df t; o(t); } @ { request §t; }\n}\n`);
});

test('E002 a loop variable is still not visible in the rules of the enclosing block', () => {
  only('LUNA-E002', `${H}sub main(int n) {\n  df a;\n  for i = 0..n o(a[i]);\n} @ { locator_cyclic: §i; }\n`);
});

// ----------------------------------------------------------------------------- priority

test('priority: an int expression over the statement\'s values and DFs', () => {
  const src = `${H}sub main(int n) {\n  df a;\n  o(a) @ { priority: n * 2; };\n  v(a) @ { priority: a + 1; };\n`
    + '  for i = 0..n { n1(i); } @ { priority: i; }\n  if n > 1 { n1(n); } @ { priority: 3; }\n}\n';
  assert.deepEqual(compile(src).diagnostics, []);
});

test('E011 a string priority, at the expression', () => {
  const d = only('LUNA-E011', `${H}sub main(int n) {\n  n1(n) @ { priority: §"high"; };\n}\n`);
  assert.equal(d.message, "'priority' must be a number, not a string");
  only('LUNA-E011', `${H}sub main(int n) {\n  for i = 0..n { n1(i); } @ { priority: §"i" + i; }\n}\n`);
});

test('E002 a priority over an undeclared name', () => {
  only('LUNA-E002', `${H}sub main(int n) {\n  n1(n) @ { priority: §m; };\n}\n`);
});

// ------------------------------------------------------------------ no ucode module at all

test('E026 no ucode module: one error for the program, at the first import it needs', () => {
  const src = `import c_a(int) as a;\nimport c_b(int) as b;\nimport c_unused(int) as u;\nC++ sub hello(int k) \${{ $}}\nsub main() {\n  b(1);\n  a(2);\n  hello(3);\n}\n`;
  const r = compileFrontEnd('t.fa', { source: src, ucodeExports: new Set(), ucodeModuleMissing: 'ucodes.ts' });
  assert.deepEqual(r.diagnostics.map(show), ['LUNA-E026@1:8']);
  assert.equal(r.diagnostics[0]!.message,
    'no ucode module: the program needs c_a, c_b, but ucodes.ts does not exist (write it, or give the modules with --ucodes)');
  assert.equal(r.program, null);
});

test('no ucode module and no ucode called: nothing to report', () => {
  const r = compileFrontEnd('t.fa', { source: 'import c_a(int) as a;\nsub main() f();\nsub f() main();\n', ucodeExports: new Set(), ucodeModuleMissing: 'ucodes.ts' });
  assert.deepEqual(r.diagnostics.map(show), []);
});

// ------------------------------------------------------------------------- messages that say what is wrong

test('a keyword where a name goes: said once, as a keyword, without a cascade at its uses', () => {
  const r = compile(H + 'sub f(int §out) { n1(out); n1(out + 1); }\nsub main() { f(1); }\n'.replace('§', ''));
  assert.deepEqual(r.diagnostics.map(show), ['LUNA-S001@7:11'], renderDiagnostics(r.diagnostics, r.pre));
  assert.match(r.diagnostics[0]!.message, /^syntax error: expected parameter name, found the keyword 'out', which cannot be a name: rename it \(e\.g\. 'out_'\)$/);
});

test('L005 a number with an exponent: reals have none, and the number is written out', () => {
  const one = (src: string): Diagnostic => {
    const r = compile(H + src);
    assert.deepEqual(r.diagnostics.map(show), ['LUNA-L005@7:23'], renderDiagnostics(r.diagnostics, r.pre));
    assert.equal(r.program, null);
    return r.diagnostics[0]!;
  };
  assert.equal(one('sub main() { df x; vo(1.0e9, x); }\n').message, "a number with an exponent (1.0e9): LuNA's reals have none; write 1000000000.0");
  assert.match(one('sub main() { df x; vo(25e-1, x); }\n').message, /\(25e-1\).* write 2\.5$/);
  // a name after a number is still a name: `2e` and `1ex` are not exponents
  assert.deepEqual(compile(H + 'sub main() { n1(2); }\n').diagnostics, []);
});

test('W005 a near-miss of a known rule name: did you mean, and the rule is still ignored; a far unknown rule stays silent', () => {
  const d = only('LUNA-W005', H + 'sub main() { df x; cf a: o(x) @ { §locator_cylic: 1; }; }\n');
  assert.equal(d.severity, 'warning');
  assert.equal(d.message, "unknown rule 'locator_cylic' is ignored: did you mean 'locator_cyclic'?");
  only('LUNA-W005', H + 'sub main() { df x; o(x); } @ { §req_cont x = 1; }\n');
  assert.deepEqual(compile(H + 'sub main() { df x; cf a: o(x) @ { unroll_at_once; my_hint: 3; }; }\n').diagnostics, [], 'unknown rules are accepted as the original does');
});

test('E033 heavy anywhere but as the flag of a CF that runs a ucode', () => {
  const sub = 'sub helper() n1(1);\n';
  assert.deepEqual(compile(H + 'sub main() { df x; cf a: o(x) @ { heavy; }; v(x) @ { heavy, stealable; }; }\n').diagnostics, [], 'on calls of ucodes');
  assert.match(only('LUNA-E033', H + 'sub main() { df x; o(x) @ { §heavy: 1; }; }\n').message, /'heavy' is a flag and takes nothing: write 'heavy;'/);
  only('LUNA-E033', H + 'sub main() { df x; o(x) @ { §heavy x; }; }\n');
  assert.match(only('LUNA-E033', H + sub + 'sub main() { helper() @ { §heavy; }; }\n').message, /'helper' is a sub \(mark the calls of ucodes inside it\)/);
  assert.match(only('LUNA-E033', H + 'sub main() { df x; for i = 0..1 { o(x[i]); } @ { §heavy; } }\n').message, /write it on that 'cf' statement, not on a block/);
  only('LUNA-E033', H + 'sub main() { df x; o(x); } @ { §heavy; }\n');
});
