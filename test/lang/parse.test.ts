// Lexer and parser: golden ASTs for every grammar construct (golden/parse), the precedence and
// lexical quirks of docs/language.md §3–§4.2, one test per diagnostic code, error recovery.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Block, Expr, Import, Param, Pragma, Program, Rule, Stmt, SubDef, ExternParam } from '../../src/lang/ast.js';
import type { Diagnostic } from '../../src/lang/diagnostics.js';
import { rawPreprocessed, type Preprocessed } from '../../src/lang/source.js';
import { tokenize } from '../../src/lang/lexer.js';
import { parse, parseFile, originOf } from '../../src/lang/parser.js';
import { preprocessText } from '../../src/lang/preprocess.js';

const GOLDEN = fileURLToPath(new URL('../../../test/lang/golden/parse/', import.meta.url));
const UPDATE = process.env.UPDATE_GOLDEN === '1';

// ------------------------------------------------------------------------------ AST printer

function exprStr(e: Expr): string {
  switch (e.kind) {
    case 'int':
    case 'real':
      return e.kind === 'real' && Number.isInteger(e.value) ? e.value.toFixed(1) : String(e.value);
    case 'string':
      return JSON.stringify(e.value);
    case 'cast':
      return `${e.to}(${exprStr(e.expr)})`;
    case 'id':
      return e.name + e.indices.map((i) => `[${exprStr(i)}]`).join('');
    case 'neg':
      return `(-${exprStr(e.operand)})`;
    case 'bin':
      return `(${exprStr(e.left)} ${e.op} ${exprStr(e.right)})`;
    case 'cond':
      return `(${exprStr(e.cond)} ? ${exprStr(e.then)} : ${exprStr(e.else)})`;
  }
}

/** Indented tree of a program; `@L:C` is the origin of each node's pos. */
export function printProgram(pre: Preprocessed, prog: Program): string {
  const at = (pos: number): string => {
    const o = originOf(pre, pos);
    return `@${o.line}:${o.col}`;
  };
  const out: string[] = [];
  const line = (depth: number, s: string): void => void out.push('  '.repeat(depth) + s);
  const exprs = (es: Expr[]): string => es.map(exprStr).join(', ');
  const param = (p: Param | ExternParam): string =>
    `${p.type}${p.ref ? '&' : ''}${p.name !== undefined ? ` ${p.name}` : ''} ${at(p.pos)}${p.namePos !== undefined ? ` name${at(p.namePos)}` : ''}`;
  const pragma = (p?: Pragma): string => (p ? ` <<${[p.kind, ...p.args.map(exprStr)].join(', ')}>> ${at(p.pos)}` : '');
  const rule = (d: number, r: Rule): void => {
    switch (r.kind) {
      case 'assign':
        return line(d, `rule assign ${r.property} ${exprStr(r.id)} = ${exprStr(r.value)} ${at(r.pos)}`);
      case 'map':
        return line(d, `rule map ${r.property} ${exprStr(r.id)} => ${exprStr(r.expr)} ${at(r.pos)}`);
      case 'enum':
        return line(d, `rule enum ${r.property} ${exprs(r.items)} ${at(r.pos)}`);
      case 'expr':
        return line(d, `rule expr ${r.property}: ${exprStr(r.expr)} ${at(r.pos)}`);
      case 'flags':
        return line(d, `rule flags ${r.flags.join(', ')} ${at(r.pos)}`);
    }
  };
  const block = (d: number, b: Block): void => {
    line(d, `block ${b.braced ? 'braced' : 'single'} ${at(b.pos)}`);
    if (b.dfs.length) line(d + 1, `df ${b.dfs.map((x) => `${x.name} ${at(x.pos)}`).join(', ')}`);
    for (const s of b.stmts) stmt(d + 1, s);
    for (const r of b.rules) rule(d + 1, r);
  };
  const stmt = (d: number, s: Stmt): void => {
    switch (s.kind) {
      case 'cf':
        line(d, `cf ${at(s.pos)}${s.label ? ` label ${exprStr(s.label)} ${at(s.label.pos)}` : ''} callee ${s.callee} ${at(s.calleePos)}`);
        line(d + 1, `args (${exprs(s.args)})`);
        if (s.setdfs) line(d + 1, `>> (${exprs(s.setdfs)})`);
        if (s.deletes) line(d + 1, `--> (${exprs(s.deletes)})`);
        for (const r of s.rules) rule(d + 1, r);
        return;
      case 'let':
        line(d, `let ${at(s.pos)} ${s.bindings.map((b) => `${b.name} ${at(b.pos)} = ${exprStr(b.value)}`).join(', ')}`);
        return block(d + 1, s.body);
      case 'for':
        line(d, `for ${at(s.pos)}${pragma(s.pragma)} ${s.var} ${at(s.varPos)} = ${exprStr(s.first)} .. ${exprStr(s.last)}`);
        return block(d + 1, s.body);
      case 'while':
        line(d, `while ${at(s.pos)}${pragma(s.pragma)} ${exprStr(s.cond)}, ${s.var} ${at(s.varPos)} = ${exprStr(s.start)} .. out ${exprStr(s.out)}`);
        return block(d + 1, s.body);
      case 'if':
        line(d, `if ${at(s.pos)} ${exprStr(s.cond)}`);
        return block(d + 1, s.body);
    }
  };
  for (const item of prog.items) {
    switch (item.kind) {
      case 'sub':
        line(0, `sub ${at(item.pos)}${pragma(item.pragma)} ${item.name} ${at(item.namePos)}`);
        for (const p of item.params) line(1, `param ${param(p)}`);
        block(1, item.body);
        break;
      case 'foreign':
        line(0, `C++ sub ${at(item.pos)} ${item.name} ${at(item.namePos)} __block(${item.block})`);
        for (const p of item.params) line(1, `param ${param(p)}`);
        break;
      case 'head':
        line(0, `C++ ${item.name} ${at(item.pos)} __block(${item.block})`);
        break;
      case 'import':
        line(0, `import ${at(item.pos)} ${item.code} ${at(item.codePos)} as ${item.alias} ${at(item.aliasPos)}${item.cuda ? ' CUDA' : ''}${item.nocpu ? ' NOCPU' : ''}`);
        for (const p of item.params) line(1, `param ${param(p)}`);
        break;
    }
  }
  return out.join('\n') + '\n';
}

// ---------------------------------------------------------------------------------- helpers

function parseSrc(src: string, file = 'test.fa'): { pre: Preprocessed; program: Program; diagnostics: Diagnostic[] } {
  const { pre, diagnostics: pd } = preprocessText(file, src);
  const { program, diagnostics } = parse(pre);
  return { pre, program, diagnostics: [...pd, ...diagnostics] };
}

/** `code line:col` of each diagnostic, for compact assertions. */
const where = (ds: Diagnostic[]): string[] => ds.map((d) => `${d.code} ${d.origin?.line}:${d.origin?.col}`);

/** Parse `expr` as the argument of a call and print it. */
function expr(src: string): string {
  const r = parseSrc(`sub main() f(${src});`);
  assert.deepEqual(r.diagnostics, [], `diagnostics for ${src}`);
  const s = (r.program.items[0] as { body: Block }).body.stmts[0]!;
  assert.equal(s.kind, 'cf');
  return exprStr((s as { args: Expr[] }).args[0]!);
}

const tokTypes = (src: string): string[] =>
  tokenize(rawPreprocessed('t', src))
    .tokens.map((t) => (t.type === t.text || t.type === 'EOF' ? t.type : `${t.type}:${t.text}`));

// ---------------------------------------------------------------------------------- goldens

test('golden ASTs (golden/parse/*.fa)', async (t) => {
  const files = fs.readdirSync(GOLDEN).filter((f) => f.endsWith('.fa')).sort();
  assert.ok(files.length >= 8, 'golden fixtures present');
  for (const f of files) {
    await t.test(f, () => {
      const r = parseFile(path.join(GOLDEN, f), { includePath: [GOLDEN] });
      assert.deepEqual(r.diagnostics, [], `${f} parses cleanly`);
      const got = printProgram(r.pre, r.program);
      const exp = path.join(GOLDEN, f.replace(/\.fa$/, '.ast'));
      if (UPDATE || !fs.existsSync(exp)) fs.writeFileSync(exp, got);
      assert.equal(got, fs.readFileSync(exp, 'utf8'));
    });
  }
});

// ----------------------------------------------------------------------- expressions (§4.2)

test('precedence table §4.2', () => {
  assert.equal(expr('a ? b : c ? d : e'), '((a ? b : c) ? d : e)');
  assert.equal(expr('a ? b ? c : d : e'), '(a ? (b ? c : d) : e)');
  assert.equal(expr('a || b ? c : d'), '((a || b) ? c : d)');
  assert.equal(expr('a ? b : c || d'), '(a ? b : (c || d))');
  assert.equal(expr('a || b && c'), '(a || (b && c))');
  assert.equal(expr('a && b < c'), '(a && (b < c))');
  assert.equal(expr('a < b < c'), '((a < b) < c)');
  assert.equal(expr('a == b + 1'), '(a == (b + 1))');
  assert.equal(expr('a <= b != c >= d'), '(((a <= b) != c) >= d)');
  assert.equal(expr('a - b - c'), '((a - b) - c)');
  assert.equal(expr('a + b * c % d'), '(a + ((b * c) % d))');
  assert.equal(expr('a / b / c'), '((a / b) / c)');
  assert.equal(expr('-a * b'), '((-a) * b)');
  assert.equal(expr('-(a + b)'), '(-(a + b))');
  assert.equal(expr('--a'), '(-(-a))');
  assert.equal(expr('-1.5'), '(-1.5)');
  assert.equal(expr('-i--1*--1'), '((-i) - ((-1) * (-(-1))))');
  assert.equal(expr('4*-i%10'), '((4 * (-i)) % 10)');
  assert.equal(expr('int(x) + real(7) * string(y[i][j+1])'), '(int(x) + (real(7) * string(y[i][(j + 1)])))');
  assert.equal(expr('"a\\tb\\u0041\\\\"'), JSON.stringify('a\tbA\\'));
});

test('binary pos is the operator, neg/cast/id pos their first token, cond pos its first token', () => {
  const r = parseSrc('sub main() f((a + b) * -c ? int(d) : e);');
  const arg = ((r.program.items[0] as { body: Block }).body.stmts[0] as { args: Expr[] }).args[0]!;
  const col = (p: number): number => originOf(r.pre, p).col;
  assert.equal(arg.kind, 'cond');
  if (arg.kind !== 'cond') return;
  assert.equal(col(arg.pos), 14); // '('
  assert.equal(arg.cond.kind === 'bin' && col(arg.cond.pos), 22); // '*'
  if (arg.cond.kind === 'bin') {
    assert.equal(col(arg.cond.left.pos), 17); // '+'
    assert.equal(col(arg.cond.right.pos), 24); // '-'
  }
  assert.equal(col(arg.then.pos), 29); // 'int'
  assert.equal(col(arg.else.pos), 38); // 'e'
});

// ---------------------------------------------------------------------------- lexical (§3)

test('longest-match gotchas of §3', () => {
  assert.deepEqual(tokTypes('i-->0'), ['NAME:i', '-->', 'INT:0', 'EOF']);
  assert.deepEqual(tokTypes('a<--1'), ['NAME:a', '<--', 'INT:1', 'EOF']);
  assert.deepEqual(tokTypes('a>>b<<c'), ['NAME:a', '>>', 'NAME:b', '<<', 'NAME:c', 'EOF']);
  assert.deepEqual(tokTypes('1..5'), ['INT:1', '..', 'INT:5', 'EOF']);
  assert.deepEqual(tokTypes('1.5 1. .5'), ['REAL:1.5', 'INT:1', '.', '.', 'INT:5', 'EOF']);
  // an exponent is one (erroneous, LUNA-L005) number, not a real and a name: one message, no cascade
  assert.deepEqual(tokTypes('1.5e3'), ['REAL:1.5e3', 'EOF']);
  assert.deepEqual(tokTypes('1.5 e3'), ['REAL:1.5', 'NAME:e3', 'EOF']);
  assert.deepEqual(tokTypes('C++ head __block(3)'), ['C++', 'NAME:head', '__block', '(', 'INT:3', ')', 'EOF']);
  assert.deepEqual(tokTypes('CUDA C Cx'), ['CUDA', 'NAME:C', 'NAME:Cx', 'EOF']);
  assert.deepEqual(tokTypes('value& x => y != z && w || v'), ['value', '&', 'NAME:x', '=>', 'NAME:y', '!=', 'NAME:z', '&&', 'NAME:w', '||', 'NAME:v', 'EOF']);
  assert.deepEqual(tokTypes('else in SIZE out name'), ['else', 'in', 'SIZE', 'out', 'name', 'EOF']);
  assert.deepEqual(tokTypes('a // c\nb'), ['NAME:a', 'NAME:b', 'EOF']);
  assert.deepEqual(tokTypes('$ # @ %'), ['$', '#', '@', '%', 'EOF']);
});

test('strings: end at the first quote, JSON escapes, may span lines', () => {
  const r = tokenize(rawPreprocessed('t', '"a\\nb" "x\ny" "c\\"'));
  assert.deepEqual(r.tokens.slice(0, 3).map((t) => t.value), ['a\nb', 'x\ny', 'c']);
  // `"c\"` is a complete token whose raw text ends in a lone backslash: invalid in JSON
  assert.deepEqual(r.diagnostics.map((d) => d.code), ['LUNA-L002']);
});

test('reserved words are syntax errors wherever they appear', () => {
  const r = parseSrc('sub main(int in) {\n  if 1 f();\n  else g();\n  h(SIZE);\n}\n');
  assert.deepEqual(where(r.diagnostics), ['LUNA-S002 1:14', 'LUNA-S002 3:3', 'LUNA-S002 4:5']);
  assert.match(r.diagnostics[1]!.message, /found reserved word 'else'.*no else/);
});

// ------------------------------------------------------------------------- grammar quirks

test('block structure rules', () => {
  const ok = (src: string): void => assert.deepEqual(parseSrc(src).diagnostics, [], src);
  ok('sub f() g();');
  ok('sub f() for i = 1..3 g(i);');
  ok('sub f() { df a; g(a); } @ { stealable; }');
  ok('sub f() { if 1 { g(); } @ { locator_cyclic: 1; } }');
  ok('sub f() cf x: g() @ { stealable; };');
  ok('sub f(value& v, value w) g(v);');
  ok('import f() as g; import h(int, name `x, value&);');
  ok('import f(int) : CUDA; import g(int) : CUDA, NOCPU;');
  ok('import f(int) : WAITS; import g(int) : CUDA, WAITS; import h(int) : CUDA, NOCPU, WAITS;');
  ok('import f(block `b, int) as g; import h(block); sub s(block b) g(b, 1);');
  // `block` stays a name everywhere but in a parameter list
  ok('sub f() { df block; g(block, block[1]); } @ { locator_cyclic block[i] => i; }');
  // there are no expression statements, assignments or calls inside expressions
  const bad = (src: string, d: string): void => assert.deepEqual(where(parseSrc(src).diagnostics), [d], src);
  bad('sub f() { x = 1; }', 'LUNA-S001 1:13');
  bad('sub f() { g(h(1)); }', 'LUNA-S001 1:14');
  bad('sub f() { g(!x); }', 'LUNA-L001 1:13');
  bad('sub f() { g(+x); }', 'LUNA-S001 1:13');
  bad('sub f() { g(i-->0); }', 'LUNA-S001 1:14');
  bad('sub f() { g(a<--1); }', 'LUNA-S001 1:14');
  bad('sub f() { g() @ {}; }', 'LUNA-S001 1:18');
  bad('sub f() { g() @ { stealable; } }', 'LUNA-S001 1:32');
  bad('sub f() { df a; df b; g(); }', 'LUNA-S004 1:17');
  bad('import f(int) : NOCPU;', 'LUNA-S001 1:17');
  bad('import f(int) : WAIT;', 'LUNA-S001 1:17');
  bad('import f(int) : CUDA, NOCPU, CUDA;', 'LUNA-S001 1:30');
  bad('sub f(block) g();', 'LUNA-S001 1:12');
  bad('import f(blocks b);', 'LUNA-S001 1:10');
  bad('sub <<fast>> f() g();', 'LUNA-S001 1:7');
  bad('sub f() <<rush>> g();', 'LUNA-S001 1:9');
});

// ----------------------------------------------------------------------- one per diagnostic

test('LUNA-L001 invalid symbol', () => {
  const r = parseSrc('sub main() {\n  f(a | b);\n}');
  assert.equal(where(r.diagnostics)[0], 'LUNA-L001 2:7');
  assert.equal(r.diagnostics[0]!.message, 'invalid symbol: |');
});

test('LUNA-L002 invalid escape in a string', () => {
  const r = parseSrc('sub main() {\n  f("ab\\dc");\n}');
  assert.deepEqual(where(r.diagnostics), ['LUNA-L002 2:8']);
  assert.match(r.diagnostics[0]!.message, /\\d/);
});

test('LUNA-L003 unterminated string (lexer; the preprocessor reports it too)', () => {
  const pre = rawPreprocessed('t', 'sub main() f("abc);');
  const r = tokenize(pre);
  assert.deepEqual(where(r.diagnostics), ['LUNA-L003 1:14']);
  // parseFile keeps only the preprocessor's report
  const p = parseSrc('sub main() f("abc);');
  assert.ok(p.diagnostics.some((d) => d.code === 'LUNA-P006'));
});

test('LUNA-L004 integer literal beyond int (warning)', () => {
  const r = parseSrc('sub main() f(2147483648, 2147483647);');
  assert.deepEqual(where(r.diagnostics), ['LUNA-L004 1:14']);
  assert.equal(r.diagnostics[0]!.severity, 'warning');
});

test('LUNA-S001 syntax error: expected X, found Y', () => {
  const r = parseSrc('sub main() {\n  f(1 2);\n}');
  assert.deepEqual(where(r.diagnostics), ['LUNA-S001 2:7']);
  assert.equal(r.diagnostics[0]!.message, "syntax error: expected ',' or ')', found number 2");
});

test('LUNA-S001 at end of file points after the last token', () => {
  const r = parseSrc('sub main() {\n  f();\n');
  assert.deepEqual(where(r.diagnostics), ['LUNA-S001 2:7']);
  assert.equal(r.diagnostics[0]!.message, "syntax error: expected '}', found end of file");
  assert.deepEqual(where(parseSrc('').diagnostics), ['LUNA-S001 1:1']);
});

test('LUNA-S002 reserved word', () => {
  const r = parseSrc('sub main() {\n  for in = 1..2 f();\n}');
  assert.deepEqual(where(r.diagnostics), ['LUNA-S002 2:7']);
});

test('LUNA-S003 empty braced block', () => {
  const r = parseSrc('sub main() {\n}\nsub g() { for i = 1..2 { } }');
  assert.deepEqual(where(r.diagnostics), ['LUNA-S003 2:1', 'LUNA-S003 3:26']);
});

test('LUNA-S004 df line not first', () => {
  const r = parseSrc('sub main() {\n  f();\n  df x;\n  g(x);\n}');
  assert.deepEqual(where(r.diagnostics), ['LUNA-S004 3:3']);
  // the names are still recorded
  assert.deepEqual((r.program.items[0] as { body: Block }).body.dfs.map((d) => d.name), ['x']);
});

test('LUNA-S005 C++ block other than head', () => {
  const r = parseSrc('C++ tail ${{ int x; $}}\nsub main() f();');
  assert.deepEqual(where(r.diagnostics), ['LUNA-S005 1:5']);
});

test('LUNA-S006 __block(N) without a foreign block', () => {
  const r = parseSrc('C++ sub f(int n) __block(3)\nsub main() f(1);');
  assert.deepEqual(where(r.diagnostics), ['LUNA-S006 1:26']);
});

// ----------------------------------------------------------------------------- recovery

test('several syntax errors in one file are all reported, the rest still parses', () => {
  const src = [
    'import f(int, name) as f',            // 1: missing ';'
    'sub g(int n) {',                      // 2
    '  df a, b;',                          // 3
    '  f(n, a) >> b;',                     // 4: '>>' needs '('
    '  for i = 1 .. { f(i, b); }',         // 5: missing bound
    '  f(1 + , b);',                       // 6
    '  if a > 0 { f(1, a) @ { req_count = 2; locator_cyclic: 1; }; }', // 7: bad rule
    '  f(2, a);',                          // 8
    '}',
    'sub main() { g(1) }',                 // 10: missing ';'
    'sub h() { let x = 1 h2(x); }',        // 11 fine
  ].join('\n');
  const r = parseSrc(src);
  assert.deepEqual(where(r.diagnostics), [
    'LUNA-S001 2:1',
    'LUNA-S001 4:14',
    'LUNA-S001 5:16',
    'LUNA-S001 6:9',
    'LUNA-S001 7:36',
    'LUNA-S001 10:19',
  ]);
  const subs = r.program.items.filter((i) => i.kind === 'sub').map((i) => i.name);
  assert.deepEqual(subs, ['g', 'main', 'h']);
  const g = r.program.items.find((i) => i.kind === 'sub' && i.name === 'g') as { body: Block };
  // statements around the broken ones survive; the broken rule is dropped, the next kept
  assert.deepEqual(g.body.stmts.map((s) => s.kind), ['if', 'cf']);
  const ifBody = (g.body.stmts[0] as { body: Block }).body.stmts[0] as { rules: Rule[] };
  assert.deepEqual(ifBody.rules.map((x) => x.kind), ['expr']);
});

test('a missing } is reported once and the next sub still parses', () => {
  const r = parseSrc('sub g() {\n  f();\n\nsub main() { g(); }');
  assert.deepEqual(where(r.diagnostics), ['LUNA-S001 4:1']);
  assert.deepEqual(r.program.items.map((i) => (i.kind === 'sub' ? i.name : i.kind)), ['g', 'main']);
});

// ---------------------------------------------------------------------------- parseFile

test('parseFile: preprocessor + lexer + parser diagnostics sorted by position', () => {
  const files: Record<string, string> = {
    'm.fa': '#include "i.fa"\nsub main() {\n  f(1 2, $X);\n  g(~);\n}\n',
    'i.fa': 'import f(int, int) as f;\n#bogus\n',
  };
  const r = parseFile('m.fa', { readFile: (p) => files[p] ?? (() => { throw new Error('ENOENT'); })() });
  assert.deepEqual(
    r.diagnostics.map((d) => `${d.code} ${d.origin!.file}:${d.origin!.line}:${d.origin!.col}`),
    ['LUNA-S001 m.fa:3:7', 'LUNA-P002 m.fa:3:10', 'LUNA-L001 m.fa:4:5', 'LUNA-P001 i.fa:2:1'],
  );
  assert.deepEqual(r.pre.files, ['m.fa', 'i.fa']);
});

test('LUNA-S007 nesting too deep, at the token that passes the limit', () => {
  // `f(` then 300 parentheses: the 257th is level 257
  const r = parseSrc(`sub main() f(${'('.repeat(300)}1${')'.repeat(300)});`);
  assert.deepEqual(where(r.diagnostics), [`LUNA-S007 1:${14 + 256}`]);
  assert.equal(r.diagnostics[0]!.message, 'nesting too deep: more than 256 levels of blocks and sub-expressions');
});

test('long flat chains parse into left-leaning trees, without recursion per element', () => {
  const n = 50_000;
  assert.equal(expr('a - b - c - d'), '(((a - b) - c) - d)');
  const r = parseSrc(`sub main() f(${Array.from({ length: n }, (_, i) => `x${i}`).join(' - ')});`);
  assert.deepEqual(r.diagnostics, []);
  let e = ((r.program.items[0] as { body: Block }).body.stmts[0] as { args: Expr[] }).args[0]!;
  let depth = 0;
  while (e.kind === 'bin') { assert.equal(e.right.kind === 'id' && e.right.name, `x${n - 1 - depth}`); e = e.left; depth++; }
  assert.equal(depth, n - 1);
});

test('import attributes and the block kind reach the AST', () => {
  const r = parseSrc('import f(block `b, int) as g : CUDA, WAITS;\nimport h(value) : CUDA, NOCPU;\nsub s(block b) g(b, 1);');
  assert.deepEqual(r.diagnostics, []);
  const [f, h, s] = r.program!.items as [Import, Import, SubDef];
  assert.deepEqual([f.params.map((p) => p.type), f.cuda, f.nocpu, f.waits], [['block', 'int'], true, false, true]);
  assert.deepEqual([h.cuda, h.nocpu, h.waits], [true, true, false]);
  assert.deepEqual(s.params.map((p) => p.type), ['block']);
});
