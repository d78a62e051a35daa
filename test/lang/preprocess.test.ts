// Preprocessor (docs/language.md §2): golden outputs (golden/pp), every rule on small in-memory
// sources with origins spot-checked, one test per diagnostic code.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Diagnostic } from '../../src/lang/diagnostics.js';
import type { Origin, Preprocessed } from '../../src/lang/source.js';
import { preprocess, type PreprocessOptions } from '../../src/lang/preprocess.js';
import { blockOriginOf, originOf } from '../../src/lang/origin.js';

const GOLDEN = fileURLToPath(new URL('../../../test/lang/golden/pp/', import.meta.url));
const UPDATE = process.env.UPDATE_GOLDEN === '1';

/** Preprocess a virtual file system; the first file is the main one. */
function pp(files: Record<string, string>, opts: PreprocessOptions = {}): { pre: Preprocessed; diagnostics: Diagnostic[] } {
  const main = Object.keys(files)[0]!;
  return preprocess(main, {
    ...opts,
    readFile: (p) => {
      const f = files[path.normalize(p)];
      if (f === undefined) throw new Error(`ENOENT: ${p}`);
      return f;
    },
  });
}

const text = (src: string, opts: PreprocessOptions = {}): string => {
  const r = pp({ 'm.fa': src }, opts);
  assert.deepEqual(r.diagnostics, [], `diagnostics for ${JSON.stringify(src)}`);
  return r.pre.text;
};

/** `file:line:col` of the first occurrence of `needle` in the output. */
function originAt(pre: Preprocessed, needle: string, nth = 0): string {
  let k = -1;
  for (let n = 0; n <= nth; n++) k = pre.text.indexOf(needle, k + 1);
  assert.ok(k >= 0, `${needle} in output`);
  const o: Origin = originOf(pre, k);
  return `${o.file}:${o.line}:${o.col}`;
}

const where = (ds: Diagnostic[]): string[] => ds.map((d) => `${d.code} ${d.origin?.file}:${d.origin?.line}:${d.origin?.col}`);

// ---------------------------------------------------------------------------------- goldens

test('golden preprocessed texts (golden/pp/*.fa)', async (t) => {
  const files = fs.readdirSync(GOLDEN).filter((f) => f.endsWith('.fa')).sort();
  assert.ok(files.length >= 3);
  for (const f of files) {
    await t.test(f, () => {
      const r = preprocess(path.join(GOLDEN, f), { includePath: [GOLDEN], defines: { SIZE_X: '4' } });
      assert.deepEqual(r.diagnostics, []);
      let got = r.pre.text;
      for (const b of r.pre.blocks) got += `--- block ${b.index} @${b.origin.line}:${b.origin.col}\n${b.text}\n`;
      const exp = path.join(GOLDEN, f.replace(/\.fa$/, '.out'));
      if (UPDATE || !fs.existsSync(exp)) fs.writeFileSync(exp, got);
      assert.equal(got, fs.readFileSync(exp, 'utf8'));
    });
  }
});

// ------------------------------------------------------------------------- lexical rules

test('interpreter line is dropped, its newline kept', () => {
  assert.equal(text('#!/usr/bin/env luna\nsub'), '\nsub');
  assert.equal(text('sub\n#!/x'), 'sub\n#!/x'); // only on the first line
});

test('strings are copied verbatim: no macros, no comments inside', () => {
  assert.equal(text('#define A 1\nf("$A // /* `x \\" ", $A)'), '\nf("$A // /* `x \\" ", 1)');
});

test('comments are removed without leaving a space', () => {
  assert.equal(text('a/*x*/b'), 'ab');
  assert.equal(text('a/*\n\n*/b'), 'ab');
  assert.equal(text('a // c\nb'), 'a \nb');
  assert.equal(text('a // c \\\n still comment\nb'), 'a \nb');
});

test('backtick one-word comments', () => {
  assert.equal(text('import f(int `n, name `out_1 x, `);'), 'import f(int , name  x, );');
});

test('#define with params, $-references, rescanning, leading blank dropped', () => {
  assert.equal(text('#define N  5\n$N'), '\n 5');
  assert.equal(text('#define A $B+1\n#define B 2\n$A'), '\n\n2+1');
  assert.equal(text('#define F(a,b) $a*$b\n$F(1, 2)'), '\n1*2');
  assert.equal(text('#define F(a, b) ($a-$b)\n#define G(x) $F($x, $x)\n$G(y)'), '\n\n(y-y)');
  assert.equal(text('#define F(a) [$a]\n$F(g(1, 2))'), '\n[g(1, 2)]', 'balanced parentheses in args');
  assert.equal(text('#define F(a) [$a]\n$F(x\\, y)'), '\n[x, y]', 'backslash escapes');
  assert.equal(text('#define F(a) "$a" $a\n$F(z)'), '\n"$a" z', 'no substitution in strings');
  assert.equal(text('#define Z() zero\n$Z()'), '\nzero');
  assert.equal(text('#define S "a//b" // comment\n$S'), '\n"a//b" ');
});

test('#define continuation: backslash dropped (fixes the original), newline kept', () => {
  const r = pp({ 'm.fa': '#define L f(1);\\\n  g(2);\nsub main() { $L }' });
  assert.deepEqual(r.diagnostics, []);
  assert.equal(r.pre.text, '\nsub main() { f(1);\n  g(2); }');
  // expansion characters map to the macro body
  assert.equal(originAt(r.pre, 'g(2)'), 'm.fa:2:3');
  assert.equal(originAt(r.pre, 'f(1)'), 'm.fa:1:11');
});

test('macro args keep the use-site origin; -D bodies map to the use site', () => {
  const r = pp({ 'm.fa': '#define F(a) h($a)\n\n  $F(xy) $D' }, { defines: { D: 'dd' } });
  assert.deepEqual(r.diagnostics, []);
  assert.equal(r.pre.text, '\n\n  h(xy) dd');
  assert.equal(originAt(r.pre, 'h('), 'm.fa:1:14');
  assert.equal(originAt(r.pre, 'xy'), 'm.fa:3:6');
  assert.equal(originAt(r.pre, 'dd'), 'm.fa:3:10');
});

test('#undef, #ifdef/#ifndef/#else/#endif (nested), -D', () => {
  const src = [
    '#ifdef A', 'a1', '#else', 'a0', '#endif',
    '#ifndef B', 'b0', '#ifdef A', 'nested', '#endif', '#else', 'b1', '#endif',
    '#define C', '#undef C', '#ifdef C', 'c1', '#endif // comments allowed',
  ].join('\n');
  const only = (s: string): string => s.split(/\s+/).filter(Boolean).join(' ');
  assert.equal(only(text(src)), 'a0 b0');
  assert.equal(only(text(src, { defines: { A: '' } })), 'a1 b0 nested');
  assert.equal(only(text(src, { defines: { A: '', B: '' } })), 'a1 b1');
  assert.equal(text('$TEST', { defines: { TEST: 'test' } }), 'test');
  // skipped regions ignore macros and bad directives
  assert.equal(text('#ifdef X\n$NOPE #bogus\n#define Q 1\n#endif\n'), '\n');
});

test('#include: include path, then the including file\'s directory; macros shared', () => {
  const r = pp(
    {
      'm.fa': '#include "lib/a.fa"\n$A $B',
      [path.join('lib', 'a.fa')]: '#define A from_a\n#include "b.fa"\n',
      [path.join('lib', 'b.fa')]: '#define B from_b\nb_text',
    },
  );
  assert.deepEqual(r.diagnostics, []);
  assert.equal(r.pre.text.trim().split(/\s+/).join(' '), 'b_text from_a from_b');
  assert.deepEqual(r.pre.files, ['m.fa', path.join('lib', 'a.fa'), path.join('lib', 'b.fa')]);
  assert.equal(originAt(r.pre, 'b_text'), `${path.join('lib', 'b.fa')}:2:1`);
  // include path entries are searched first
  const r2 = pp({ 'm.fa': '#include "x.fa"', [path.join('p1', 'x.fa')]: 'one', 'x.fa': 'cwd' }, { includePath: ['p1', '.'] });
  assert.equal(r2.pre.text, 'one');
});

test('foreign blocks: both forms, numbered, replaced by " __block(N) "', () => {
  const src = 'C++ head ${<EOT}#include <x>\nEOT\nC++ sub f() ${{ return; $}} $}}';
  const r = pp({ 'm.fa': src });
  assert.deepEqual(r.diagnostics, []);
  assert.equal(r.pre.text, 'C++ head  __block(0) \nC++ sub f()  __block(1)  $}}');
  assert.deepEqual(r.pre.blocks.map((b) => b.text), ['#include <x>\n', '{ return; }']);
  assert.deepEqual(r.pre.blocks.map((b) => `${b.origin.line}:${b.origin.col}`), ['1:17', '3:15']);
  // every character of a block keeps its own origin: `r` of `return` and the closing brace
  const b1 = r.pre.blocks[1]!;
  const o = (k: number): string => { const x = blockOriginOf(r.pre, b1, k); return `${x.line}:${x.col}`; };
  assert.deepEqual([o(0), o(b1.text.indexOf('r')), o(b1.text.length - 1)], ['3:15', '3:17', '3:26']);
  // inserted text maps to the `$` that opened the block
  assert.equal(originAt(r.pre, '__block(1)'), 'm.fa:3:13');
  // blocks in skipped regions are not numbered
  assert.equal(text('#ifdef X\n${{ a $}}\n#endif\n${{b$}}'), '\n __block(0) ');
});

test('origins: every output character, 1-based line/col', () => {
  const r = pp({ 'm.fa': 'ab\n\tcd' });
  assert.deepEqual([...r.pre.text].map((_, k) => { const o = originOf(r.pre, k); return `${o.file}:${o.line}:${o.col}`; }),
    ['m.fa:1:1', 'm.fa:1:2', 'm.fa:1:3', 'm.fa:2:1', 'm.fa:2:2', 'm.fa:2:3']);
});

// ----------------------------------------------------------------------- one per diagnostic

function diag(files: Record<string, string>, expected: string[], opts: PreprocessOptions = {}): Diagnostic[] {
  const r = pp(files, opts);
  assert.deepEqual(where(r.diagnostics), expected);
  return r.diagnostics;
}

test('LUNA-P001 illegal directive', () => {
  const [d] = diag({ 'm.fa': 'a\n  #pragma once\nb' }, ['LUNA-P001 m.fa:2:3']);
  assert.equal(d!.message, 'illegal directive: #pragma');
});

test('LUNA-P002 undefined macro', () => {
  const [d] = diag({ 'm.fa': 'f(1,\n   $NOPE)' }, ['LUNA-P002 m.fa:2:4']);
  assert.equal(d!.message, 'undefined identifier: NOPE');
});

test('LUNA-P003 duplicate #define (also against -D)', () => {
  diag({ 'm.fa': '#define A 1\n#define A 2\n' }, ['LUNA-P003 m.fa:2:9']);
  diag({ 'm.fa': '#define A 1\n' }, ['LUNA-P003 m.fa:1:9'], { defines: { A: '2' } });
});

test('LUNA-P004 unterminated comment', () => {
  diag({ 'm.fa': 'a\nb /* c\n' }, ['LUNA-P004 m.fa:2:3']);
});

test('LUNA-P005 unterminated foreign block', () => {
  diag({ 'm.fa': 'x\n ${{ code' }, ['LUNA-P005 m.fa:2:2']);
  diag({ 'm.fa': 'x ${<END} code EN' }, ['LUNA-P005 m.fa:1:3']);
  diag({ 'm.fa': 'x ${<END code' }, ['LUNA-P005 m.fa:1:3']);
});

test('LUNA-P006 unterminated string', () => {
  diag({ 'm.fa': 'f(\n "abc);\n' }, ['LUNA-P006 m.fa:2:2']);
});

test('LUNA-P007 #else without #ifdef', () => {
  diag({ 'm.fa': 'a\n#else\n' }, ['LUNA-P007 m.fa:2:1']);
});

test('LUNA-P008 #endif without #ifdef', () => {
  diag({ 'm.fa': '#ifdef A\n#endif\n#endif' }, ['LUNA-P008 m.fa:3:1']);
});

test('LUNA-P009 missing #endif', () => {
  diag({ 'm.fa': 'a\n#ifndef A\nb\n' }, ['LUNA-P009 m.fa:2:1']);
});

test('LUNA-P010 include not found', () => {
  const [d] = diag({ 'm.fa': '\n#include "nope.fa"\n' }, ['LUNA-P010 m.fa:2:1']);
  assert.match(d!.message, /nope\.fa/);
});

test('LUNA-P011 include too deep', () => {
  const files: Record<string, string> = { 'm.fa': '#include "f1.fa"\n' };
  for (let k = 1; k <= 70; k++) files[`f${k}.fa`] = `#include "f${k + 1}.fa"\n`;
  files['f71.fa'] = 'end';
  // main is depth 0, f64 is depth 64 and may not include f65
  diag(files, ['LUNA-P011 f64.fa:1:1']);
});

test('LUNA-P012 include cycle', () => {
  const [d] = diag({ 'm.fa': '#include "a.fa"\n', 'a.fa': 'x\n#include "m.fa"\n' }, ['LUNA-P012 a.fa:2:1']);
  assert.match(d!.message, /m\.fa -> a\.fa -> m\.fa/);
});

test('LUNA-P013 bad macro arguments', () => {
  const src = '#define F(a, b) $a$b\n#define G(a) $a\n$F(1)\n$G\n$G(1, 2)\n$F(1,';
  const ds = diag({ 'm.fa': src }, ['LUNA-P013 m.fa:3:1', 'LUNA-P013 m.fa:4:1', 'LUNA-P013 m.fa:5:1', 'LUNA-P013 m.fa:6:1']);
  assert.match(ds[0]!.message, /expects 2 argument\(s\), got 1/);
});

test('LUNA-P014 malformed directive', () => {
  diag({ 'm.fa': '#define\n#ifdef A B\n#endif\n#include x.fa\n#define F(a,) 1\n' }, [
    'LUNA-P014 m.fa:1:8',
    'LUNA-P014 m.fa:2:10',
    'LUNA-P014 m.fa:4:10',
    'LUNA-P014 m.fa:5:13',
  ]);
});

test('LUNA-P015 cannot read the main file', () => {
  const r = preprocess('/definitely/not/here.fa');
  assert.deepEqual(r.diagnostics.map((d) => d.code), ['LUNA-P015']);
  assert.equal(r.pre.text, '');
});

test('LUNA-P016 recursive macro', () => {
  diag({ 'm.fa': '#define A x $B\n#define B y $A\n$A;' }, ['LUNA-P016 m.fa:2:13']);
});

test('LUNA-P017 duplicate #else', () => {
  diag({ 'm.fa': '#ifdef A\n#else\n#else\n#endif' }, ['LUNA-P017 m.fa:3:1']);
});

test('all errors are collected, scanning continues', () => {
  const r = pp({ 'm.fa': '#bad\n$U\n#endif\nok\n"open' });
  assert.deepEqual(r.diagnostics.map((d) => d.code), ['LUNA-P001', 'LUNA-P002', 'LUNA-P008', 'LUNA-P006']);
  assert.match(r.pre.text, /ok/);
});

// ------------------------------------------------------------------ macros inside arguments

test('a macro call inside a macro argument expands (the argument belongs to the use site)', () => {
  assert.equal(text('#define F(a) [$a]\n$F($F(1))'), '\n[[1]]');
  assert.equal(text('#define D(x) $x+$x\n$D($D(1))'), '\n1+1+1+1');
  assert.equal(text('#define F(a) [$a]\n#define G(b) $F($b)\n$G($F(2))'), '\n\n[[2]]');
  // positions: the inner expansion maps to the body, the innermost argument to the use
  const r = pp({ 'm.fa': '#define F(a) <$a>\n  $F($F(xy))' });
  assert.equal(r.pre.text, '\n  <<xy>>');
  assert.equal(originAt(r.pre, 'xy'), 'm.fa:2:9');
  assert.equal(originAt(r.pre, '<', 1), 'm.fa:1:14');
});

test('true recursion is still reported, also when it goes through an argument', () => {
  diag({ 'm.fa': '#define F(x) $F(x)\n$F(1)' }, ['LUNA-P016 m.fa:1:14']);
  diag({ 'm.fa': '#define G(x) $x\n#define H $G($H)\n$H' }, ['LUNA-P016 m.fa:2:14']);
});

test('LUNA-P018 expanded text beyond the size limit: positioned at the outermost use, then stop', () => {
  const src = '#define A x x x x x x x x\n#define B $A$A$A$A$A$A$A$A\n#define C $B$B$B$B$B$B$B$B\nsub main() f(\n  $C $C);\nafter';
  const r = pp({ 'm.fa': src }, { maxExpandedChars: 500 });
  assert.deepEqual(where(r.diagnostics), ['LUNA-P018 m.fa:5:3']);
  assert.match(r.diagnostics[0]!.message, /exceed 500 characters/);
  assert.ok(r.pre.text.length <= 500 && !r.pre.text.includes('after'));
});

test('LUNA-P019 macro expansion nested too deep', () => {
  let src = '';
  for (let i = 1; i <= 300; i++) src += `#define M${i} $M${i + 1}\n`;
  src += '#define M301 end\n$M1';
  const r = pp({ 'm.fa': src });
  assert.deepEqual(r.diagnostics.map((d) => d.code), ['LUNA-P019']);
  assert.match(r.diagnostics[0]!.message, /more than 256 levels/);
});

test('a macro name may continue past the end of an expansion, arguments may follow it', () => {
  assert.equal(text('#define P $F\n#define F(a) <$a>\n$P(1)'), '\n\n<1>');
  assert.equal(text('#define S /\n$S* comment */x'), '\nx');
});

test('diagnostics are capped per file, with one line counting the rest', () => {
  const r = pp({ 'm.fa': '$U '.repeat(250) });
  assert.equal(r.diagnostics.length, 201);
  assert.deepEqual(r.diagnostics[200], {
    severity: 'error', code: 'LUNA-D001', message: '50 more diagnostic(s) not shown (at most 200 per file)',
    origin: { file: 'm.fa', line: 0, col: 0 }, omitted: 50,
  });
});
