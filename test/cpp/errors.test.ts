// Every error path of C++ ucodes, with real compilation and real processes: ABORT, a C++
// exception, a wrong accessor (the run stops naming the CF), a crash in user code (the process
// stops naming the ucode, on one node and on two, never a hang), compiler errors at their
// file:line, a missing or mismatched function at the `import` line, a function declared but
// never defined, one implemented twice, no compiler at all, and no C++ headers beside luna-ts.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import type { Diagnostic } from '../../src/lang/diagnostics.js';
import { cleanEnv, DF_MODULE, fixture, luna, noCompiler, run, show } from './fixtures.js';

const skip = noCompiler();
const dirs: string[] = [];
const make = (prefix: string, files: Record<string, string>): string => {
  const d = fixture(prefix, files);
  dirs.push(d);
  return d;
};
after(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

const RUNTIME_PROGRAM = `
import c_set(int \`n, name \`x) as set;
import c_wrong(value \`x, name \`y) as wrong;
import c_abort(int \`n) as stop;
import c_throw(int \`n) as raise;
import c_crash(int \`n) as crash;
import c_divide(int \`n) as divide;

sub main(int mode)
{
    df a, b;
    set(7, a);
    if mode == 1 { cf w: wrong(a, b); }
    if mode == 2 { cf s[3]: stop(3); }
    if mode == 3 { cf r: raise(4); }
    if mode == 4 { cf c: crash(5); }
    if mode == 5 { cf d: divide(0); }
}
`;

const RUNTIME_CPP = `#include "ucenv.h"
#include <cstdio>
#include <stdexcept>
#include <string>
using namespace luna::ucenv;
extern "C" {
void c_set(int n, OutputDF &x) { x = n; }
void c_wrong(const InputDF &x, OutputDF &y) { y = x.get_real(); }
void c_abort(int n) { ABORT("n is " << n << ", too small"); }
void c_throw(int n) { throw std::out_of_range("index " + std::to_string(n)); }
void c_crash(int n) { printf("before the crash\\n"); fflush(stdout); volatile int *p = nullptr; *p = n; }
void c_divide(int n) { volatile int z = n; printf("%d\\n", 10 / z); }
}
`;

describe('run-time errors in C++ ucodes', { skip }, () => {
  let dir = '';
  before(async () => {
    dir = make('luna-cpp-rt-', { 'prog.fa': RUNTIME_PROGRAM, 'ucodes.cpp': RUNTIME_CPP });
    const r = await luna(['check', 'prog.fa'], dir);
    assert.equal(r.code, 0, show(r));
  });

  const cases: { mode: number; what: string; message: RegExp; cf?: RegExp }[] = [
    { mode: 1, what: 'a wrong accessor', message: /exception in ucode c_wrong: get_real\(\) on DF a which holds int 7/, cf: /in CF w \(ucode c_wrong.*\) at prog\.fa:13:/ },
    { mode: 2, what: 'ABORT', message: /exception in ucode c_abort: n is 3, too small \(ABORT at ucodes\.cpp:9\)/, cf: /in CF s\[3\] \(ucode c_abort.*\) at prog\.fa:14:/ },
    { mode: 3, what: 'a C++ exception', message: /exception in ucode c_throw: C\+\+ exception std::out_of_range: index 4/, cf: /in CF r \(ucode c_throw.*\) at prog\.fa:15:/ },
  ];
  for (const c of cases) {
    test(`${c.what} stops the run naming the CF`, async () => {
      const r = await luna(['run', '--threads', '2', 'prog.fa', String(c.mode)], dir);
      assert.equal(r.code, 1, show(r));
      assert.match(r.stderr, c.message, show(r));
      assert.match(r.stderr, c.cf!, show(r));
    });
  }

  test('a segmentation fault stops the run naming the ucode and the CF; output flushed before it is kept', async () => {
    const r = await luna(['run', '--threads', '2', 'prog.fa', '4'], dir, undefined, 30_000);
    assert.equal(r.signal, null, show(r));
    assert.equal(r.code, 1, show(r));
    assert.match(r.stderr, /luna: error: segmentation fault \(SIGSEGV\) in C\+\+ ucode c_crash/, show(r));
    assert.match(r.stderr, /in CF c \(ucode c_crash.*\) at prog\.fa:16:.* on node 0/, show(r));
    assert.equal(r.stdout, 'before the crash\n', show(r));
  });

  test('an integer division by zero (SIGFPE) stops the run naming the ucode and the CF', async () => {
    const r = await luna(['run', '--threads', '1', 'prog.fa', '5'], dir, undefined, 30_000);
    assert.equal(r.code, 1, show(r));
    assert.match(r.stderr, /arithmetic exception \(SIGFPE.*\) in C\+\+ ucode c_divide/, show(r));
    assert.match(r.stderr, /in CF d \(ucode c_divide.*\) at prog\.fa:17:/, show(r));
  });

  test('a crash on one of two nodes ends the whole run, never a hang', async () => {
    const r = await luna(['run', '--nodes', '2', '--threads', '1', 'prog.fa', '4'], dir, undefined, 40_000);
    assert.equal(r.signal, null, `killed by the test's timeout: the run hung\n${show(r)}`);
    assert.equal(r.code, 1, show(r));
    assert.match(r.stderr, /segmentation fault \(SIGSEGV\) in C\+\+ ucode c_crash/, show(r));
  });
});

async function check(dir: string, env?: NodeJS.ProcessEnv): Promise<{ code: number | null; diagnostics: Diagnostic[]; text: string }> {
  const r = await luna(['check', '--json', 'prog.fa'], dir, env);
  const text = show(r);
  assert.ok(r.stdout.trim().startsWith('{'), text);
  return { code: r.code, diagnostics: (JSON.parse(r.stdout) as { diagnostics: Diagnostic[] }).diagnostics, text };
}

/** The text form's diagnostics as code@file:line:col with their messages. */
const listed = (stderr: string): { at: string; message: string }[] =>
  [...stderr.matchAll(/^(\S+):(\d+):(\d+): error\[(LUNA-\w+)\]: (.*)$/gm)].map((m) => ({ at: `${m[4]}@${m[1]}:${m[2]}:${m[3]}`, message: m[5]! }));

const at = (d: Diagnostic): string => `${d.code}@${d.origin ? `${d.origin.file.replace(/^.*\//, '')}:${d.origin.line}:${d.origin.col}` : '-'}`;

describe('compile-time errors of C++ ucodes', { skip }, () => {
  test('compiler errors at their file:line; missing and mismatched functions at the import line', async () => {
    const dir = make('luna-cpp-ce-', {
      'prog.fa': `import c_ok(int \`n, name \`x) as ok;
import c_kind(value \`x, name \`y) as kind;
import c_arity(int \`n, name \`y) as arity;
import c_hidden(int \`n) as hidden;

sub main()
{
    df a, b, c;
    ok(1, a);
    kind(a, b);
    arity(2, c);
    hidden(3);
}
`,
      'ucodes.cpp': `#include "ucenv.h"
using namespace luna::ucenv;
namespace inner { extern "C" void c_hidden(int n) {} }
extern "C" {
void c_ok(int n, OutputDF &x) { x = n + undefined_name; }
void c_kind(int x, OutputDF &y) { y = x; }
void c_arity(int n) {}
}
`,
    });
    // the text form, read as the JSON form is by the cases below: a failed build is not cached,
    // so a second `luna check --json` would compile the unit again (~1.2 s of CPU)
    const text = await luna(['check', 'prog.fa'], dir);
    assert.equal(text.code, 1, show(text));
    const found = listed(text.stderr);
    assert.deepEqual(found.map((d) => d.at).sort(), [
      'LUNA-U002@ucodes.cpp:5:41', // undefined_name, in the user's code
      'LUNA-U004@prog.fa:4:8', // c_hidden is in a namespace: not visible as the import's function
      'LUNA-U005@prog.fa:2:8', // c_kind's first parameter is int, the import says value
      'LUNA-U005@prog.fa:3:8', // c_arity has 1 parameter, the import 2
    ].sort(), show(text));
    const kind = found.find((d) => d.at === 'LUNA-U005@prog.fa:2:8')!;
    assert.match(kind.message, /parameter 1 of c_kind is `value` in the import, so its C\+\+ type must be const InputDF &/);
    const u002 = found.find((d) => d.at.startsWith('LUNA-U002@'))!;
    assert.match(u002.message, /undefined_name/);
    // the C++ line is shown with a caret
    assert.match(text.stderr, /ucodes\.cpp:5:41: error\[LUNA-U002\]: .*undefined_name[^\n]*\n[^\n]*\n\s*5 \| void c_ok/, show(text));
  });

  test('no function at all: reported at the import line by luna check', async () => {
    const dir = make('luna-cpp-missing-', {
      'prog.fa': 'import c_there(int `n) as there;\nimport c_absent(int `n) as absent;\nsub main() { there(1); absent(2); }\n',
      'ucodes.cpp': '#include "ucenv.h"\nextern "C" void c_there(int n) {}\n',
    });
    const r = await check(dir);
    assert.equal(r.code, 1, r.text);
    assert.deepEqual(r.diagnostics.map(at), ['LUNA-E015@prog.fa:2:8'], r.text);
    assert.match(r.diagnostics[0]!.message, /c_absent.*ucodes\.cpp/);
  });

  test('declared but never defined, and implemented in both C++ and TypeScript', async () => {
    const dir = make('luna-cpp-link-', {
      'prog.fa': 'import c_nodef(int `n) as nodef;\nimport c_twice(int `n) as twice;\nsub main() { nodef(1); twice(2); }\n',
      'ucodes.cpp': '#include "ucenv.h"\nextern "C" void c_nodef(int n);\nextern "C" void c_twice(int n) {}\n',
      'ucodes.ts': 'export function c_twice(n: number): void {}\n',
    });
    // `luna run` reports what the build finds as `luna check` does, without loading the
    // TypeScript compiler for the module (~5 s of CPU a check here)
    const r1 = await luna(['run', 'prog.fa'], dir);
    assert.equal(r1.code, 1, show(r1));
    assert.deepEqual(listed(r1.stderr).map((d) => d.at), ['LUNA-U006@prog.fa:1:8'], show(r1));
    // define it: now the library links, and the duplicate shows
    const dir2 = make('luna-cpp-dup-', {
      'prog.fa': 'import c_twice(int `n) as twice;\nsub main() { twice(2); }\n',
      'ucodes.cpp': '#include "ucenv.h"\nextern "C" void c_twice(int n) {}\n',
      'ucodes.ts': 'export function c_twice(n: number): void {}\n',
    });
    const r2 = await luna(['run', 'prog.fa'], dir2);
    assert.equal(r2.code, 1, show(r2));
    assert.deepEqual(listed(r2.stderr).map((d) => d.at), ['LUNA-U007@prog.fa:1:8'], show(r2));
    assert.match(r2.stderr, /c_twice is implemented twice/, show(r2));
  });

  test('no C++ compiler: one clear message; TypeScript programs keep working', async () => {
    const env = cleanEnv({ CXX: '/nonexistent/bin/g++' });
    const dir = make('luna-cpp-nocxx-', {
      'prog.fa': 'import c_f(int `n) as f;\nsub main() { f(1); }\n',
      'ucodes.cpp': '#include "ucenv.h"\nextern "C" void c_f(int n) {}\n',
      'ts.fa': 'import c_g(int `n) as g;\nsub main() { g(1); }\n',
      'g.ts': `import type { DF } from ${JSON.stringify(DF_MODULE)};\nexport function c_g(n: number): void { console.log('ts ok ' + n); }\n`,
    });
    const r = await luna(['run', 'prog.fa'], dir, env);
    assert.equal(r.code, 1, show(r));
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 1, show(r));
    assert.match(lines[0]!, /error\[LUNA-U003\]: no C\+\+ compiler: CXX=\/nonexistent\/bin\/g\+\+ was not found/);
    const ts = await luna(['run', '--ucodes', 'g.ts', 'ts.fa'], dir, env);
    assert.equal(ts.code, 0, show(ts));
    assert.equal(ts.stdout, 'ts ok 1\n');
  });

  test('luna-ts installed without its C++ headers (native/ucenv.h): one clear message, no stack trace', async () => {
    // the bundled CLI copied alone, with no native/ beside it or above it
    const dir = make('luna-cpp-noheaders-', {
      'prog.fa': 'import c_f(int `n) as f;\nsub main() { f(1); }\n',
      'ucodes.cpp': '#include "ucenv.h"\nextern "C" void c_f(int n) {}\n',
    });
    cpSync(fileURLToPath(new URL('../../bundle', import.meta.url)), join(dir, 'bundle'), { recursive: true });
    const main = JSON.stringify(join(dir, 'bundle', 'main.js'));
    const out = await run(process.execPath, ['--input-type=module', '-e', `process.exitCode = await (await import(${main})).cli(['run', 'prog.fa'])`], dir);
    assert.equal(out.code, 1, show(out));
    assert.match(out.stderr, /^error\[LUNA-U003\]: luna-ts is installed without its C\+\+ headers \(no native\/ucenv\.h in .*\), so the C\+\+ ucodes cannot be built: reinstall luna-ts\n$/, show(out));
  });
});
