// C++ ucodes beside TypeScript ones, compiled for real and run for real: one thread, two
// threads, two node processes, mpirun when present; DFs crossing between C++ and TypeScript
// (ints, reals, strings, raw shared memory, JS values), copy() sharing, the compile cache, and
// a traced run whose analysis sees the C++ fragments.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cleanEnv, DF_MODULE, fixture, luna, noCompiler, run, show, sortedLines } from './fixtures.js';

const PROGRAM = `
import c_set(int \`n, name \`x) as set;
import c_half(real \`k, value \`x, name \`y) as half;
import c_vec(int \`n, name \`v) as vec;
import c_tsvec(int \`n, name \`v) as tsvec;
import c_dot(value \`a, value \`b, name \`s) as dot;
import c_same(value \`x, name \`y) as same;
import c_isshared(value \`x, value \`y) as isshared;
import c_label(string \`tag, value \`x, name \`s) as label;
import c_show(string \`tag, value \`x) as show;
import c_obj(int \`k, name \`o) as obj;
import c_pass(value \`x, name \`y) as pass;
import c_name(value \`x) as showname;
import c_ops(value \`a, value \`b, name \`r) as ops;

sub main(int n)
{
    df a, h, v, w, d, v2, l, o, o2, r;
    set(6, a);
    half(0.5, a, h);
    show("h", h);
    vec(n, v);
    tsvec(n, w);
    cf dot1: dot(v, w, d) @ { locator_cyclic: 1; };
    show("d", d);
    cf same1: same(v, v2) @ { locator_cyclic: 0; };
    cf shared1: isshared(v, v2) @ { locator_cyclic: 0; };
    cf label1: label("a", a, l) @ { locator_cyclic: 1; };
    show("l", l);
    obj(5, o);
    pass(o, o2);
    show("o2", o2);
    showname(v2);
    ops(a, h, r);
    show("r", r);
}
`;

// extra.h (EXTRA_SCALE 1) lets the cache test change a header without a second compile of a
// changed source
const CPP = `#include "ucenv.h"
#include "extra.h"
#include <cstdio>
#include <string>
using namespace luna::ucenv;
extern "C" {
void c_set(int n, OutputDF &x) { x = n; }
void c_half(double k, const InputDF &x, OutputDF &y) { y.setValue<double>(k * x.get_int() * EXTRA_SCALE); }
// the original LuNA's style: raw blocks through create<double>(n) / getData<double>()
void c_vec(int n, OutputDF &v) { double *d = v.create<double>(n); for (int i = 0; i < n; i++) d[i] = i + 0.5; }
void c_dot(InputDF a, InputDF b, OutputDF &s) {
  const double *x = a.getData<double>(), *y = b.getData<double>();
  double t = 0;
  for (size_t i = 0; i < a.getSize() / sizeof(double); i++) t += x[i] * y[i];
  s = t;
}
void c_same(const InputDF &x, OutputDF &y) { y.copy(x); }
void c_label(const char *tag, const InputDF &x, OutputDF &s) { s = std::string(tag) + "=" + x.to_string(); }
void c_pass(const InputDF &x, OutputDF &y) { y = x; }
void c_name(const InputDF &x) { printf("name: %s, %zu bytes\\n", x.getName().c_str(), x.getSize()); }
void c_ops(const InputDF &a, const InputDF &b, OutputDF &r) { r = (a + b) * a - b / 2; }
}
`;

const TS = `import type { DF } from ${JSON.stringify(DF_MODULE)};
const shown = (v: unknown): string => (typeof v === 'object' ? JSON.stringify(v) : String(v));
export function c_tsvec(n: number, v: DF): void { const a = v.createFloat64Array(n); for (let i = 0; i < n; i++) a[i] = 2 * i; }
export function c_isshared(x: DF, y: DF): void { console.log(\`shared: \${x.getData().buffer === y.getData().buffer}\`); }
export function c_show(tag: string, x: DF): void { console.log(\`\${tag} = \${shown(x.getValue())} (\${x.getType()})\`); }
export function c_obj(k: number, o: DF): void { o.setValue({ k }); }
`;

// n = 4: v = 0.5 1.5 2.5 3.5 (C++), w = 0 2 4 6 (TypeScript), v·w = 0 + 3 + 10 + 21
const EXPECTED = [
  'h = 3 (real)',
  'd = 34 (real)',
  'shared: true',
  'l = a=DF<int>(6) (string)',
  'o2 = {"k":5} (js)',
  'name: v2, 32 bytes',
  `r = ${(6 + 3) * 6 - 3 / 2} (real)`,
].sort();

const skip = noCompiler();

describe('C++ and TypeScript ucodes in one program', { skip }, () => {
  let dir = '';
  before(async () => {
    dir = fixture('luna-cpp-run-', { 'prog.fa': PROGRAM, 'ucodes.cpp': CPP, 'extra.h': '#define EXTRA_SCALE 1\n', 'ucodes.ts': TS });
    // compile once: every run below reuses the library from the cache (a run, not `luna check`,
    // which would load the TypeScript compiler for 2-3 s of CPU)
    const r = await luna(['run', '--threads', '1', 'prog.fa', '4'], dir);
    assert.equal(r.code, 0, show(r));
  });
  after(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

  for (const threads of [1, 2]) {
    test(`${threads} thread(s): every value crosses between C++ and TypeScript`, async () => {
      const r = await luna(['run', '--threads', String(threads), 'prog.fa', '4'], dir);
      assert.equal(r.code, 0, show(r));
      assert.deepEqual(sortedLines(r.stdout), EXPECTED, show(r));
      assert.equal(r.stderr, '', show(r));
    });
  }

  // Between nodes a DF's bytes are sent, so two DFs sharing one buffer on a node may arrive as
  // two buffers elsewhere: the sharing line is only checked on one node.
  const acrossNodes = (lines: string[]): string[] => lines.filter((l) => !l.startsWith('shared:'));

  test('2 node processes: C++-made raw DFs travel to the other node', async () => {
    const r = await luna(['run', '--nodes', '2', '--threads', '1', 'prog.fa', '4'], dir);
    assert.equal(r.code, 0, show(r));
    assert.deepEqual(acrossNodes(sortedLines(r.stdout)), acrossNodes(EXPECTED), show(r));
  });

  const mpirun = (() => { try { return execFileSync('sh', ['-c', 'command -v mpirun'], { encoding: 'utf8' }).trim() || undefined; } catch { return undefined; } })();
  test('mpirun -np 2', { skip: mpirun ? false : 'mpirun not found (apt-get install openmpi-bin)' }, async () => {
    const r = await run(mpirun!, ['--allow-run-as-root', '--oversubscribe', '-np', '2', process.execPath, join(process.cwd(), 'bin/luna'), 'run', '--threads', '1', 'prog.fa', '4'], dir, cleanEnv(), 90_000);
    assert.equal(r.code, 0, show(r));
    assert.deepEqual(acrossNodes(sortedLines(r.stdout)), acrossNodes(EXPECTED), show(r));
  });

  test('a traced run: the analysis sees the C++ fragments like TypeScript ones', async () => {
    const trace = join(dir, 'run.trace');
    const r = await luna(['run', '--threads', '1', '--trace', trace, 'prog.fa', '4'], dir);
    assert.equal(r.code, 0, show(r));
    const a = await luna(['analyze', 'slow', '--json', trace], dir);
    assert.equal(a.code, 0, show(a));
    const text = a.stdout;
    for (const code of ['set', 'half', 'vec', 'dot', 'ops', 'show', 'tsvec']) assert.match(text, new RegExp(`"${code}"`), `code ${code} missing from the analysis`);
  });

  test('the library is rebuilt when an included header changes, reused otherwise', async () => {
    const cache = join(dir, '.luna-cache');
    const stamps = (): string[] => readdirSync(cache).filter((f) => f.startsWith('cpp-') && f.endsWith('.json')).map((f) => `${f}@${statSync(join(cache, f)).mtimeMs}`).sort();
    const before = stamps();
    const r1 = await luna(['run', '--threads', '1', 'prog.fa', '4'], dir);
    assert.equal(r1.code, 0, show(r1));
    assert.deepEqual(stamps(), before, 'an unchanged program must not be recompiled');
    assert.deepEqual(sortedLines(r1.stdout), EXPECTED, show(r1));
    writeFileSync(join(dir, 'extra.h'), '#define EXTRA_SCALE 2\n'); // only the header changes: h = 0.5 * 6 * 2
    const r2 = await luna(['run', '--threads', '1', 'prog.fa', '4'], dir);
    assert.equal(r2.code, 0, show(r2));
    assert.ok(r2.stdout.includes('h = 6 (real)'), show(r2));
    assert.notDeepEqual(stamps(), before, 'the changed header rebuilt the library');
  });
});

describe('inline C++ subs compile as they are', { skip: noCompiler() }, () => {
  const FOREIGN = `C++ head \${<END}
#include <cstdio>
static int twice(int x) { return 2 * x; }
END

C++ sub hello(int n) \${{
    printf("hello %d\\n", twice(n));
    fflush(stdout);
$}}

C++ sub put(real v, name x) \${{
    x.setValue(v);
$}}

C++ sub show(string tag, value x) \${{
    printf("%s = %.1f\\n", tag, x.get_real());
    fflush(stdout);
$}}

sub main()
{
    df y;
    hello(3);
    put(41.5, y);
    show("y", y);
}
`;
  test('a program of the original LuNA with its ucodes inline runs with no ucode module, on one and two nodes', async () => {
    const dir = fixture('luna-inline-', { 'foreign.fa': FOREIGN });
    try {
      for (const opts of [['--threads', '1'], ['--nodes', '2', '--threads', '1']]) {
        const r = await luna(['run', ...opts, 'foreign.fa'], dir, cleanEnv());
        assert.equal(r.code, 0, show(r));
        assert.deepEqual(sortedLines(r.stdout), ['hello 6', 'y = 41.5'], show(r));
      }
      const c = await luna(['check', 'foreign.fa'], dir, cleanEnv());
      assert.equal(c.code, 0, show(c));
      assert.equal(c.stderr, '', 'no warning about the head block, no missing implementation');
    } finally { rmSync(dir, { recursive: true, force: true }); }
  });

  test('an error in an inline body points at its line in the program', async () => {
    const dir = fixture('luna-inline-err-', { 'foreign.fa': FOREIGN.replace('x.get_real()', 'x.no_such()') });
    try {
      const r = await luna(['check', 'foreign.fa'], dir, cleanEnv());
      assert.equal(r.code, 1, show(r));
      assert.match(r.stderr, /^foreign\.fa:16:\d+: error\[LUNA-U002\]: .*no_such/m, show(r));
    } finally { rmSync(dir, { recursive: true, force: true }); }
  });

  test('a TypeScript export of the same name still wins over the inline body', async () => {
    const dir = fixture('luna-inline-ts-', {
      'foreign.fa': FOREIGN,
      'ucodes.ts': 'export function hello(n: number): void { console.log(`ts hello ${n}`); }\n',
    });
    try {
      const r = await luna(['run', '--threads', '1', 'foreign.fa'], dir, cleanEnv());
      assert.equal(r.code, 0, show(r));
      assert.deepEqual(sortedLines(r.stdout), ['ts hello 3', 'y = 41.5'], show(r));
    } finally { rmSync(dir, { recursive: true, force: true }); }
  });
});
