// Planned loops of C++ ucodes stepped natively (src/runtime/node/loop-native.ts, the addon's
// stepOn): on one thread, once a loop's codes are measured 1 call in 16, the addon runs its
// steps many to a call with the int and real values in a ring of its own. It must print what
// the JavaScript steps and the unplanned path print, name a step whose C++ code crashes or
// aborts as they do, and hand a step whose output is neither int nor real back to JavaScript.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertFails, assertOk, describeRun, luna, timingOf, type Run } from './helpers.js';
import { cleanEnv, noCompiler } from '../cpp/fixtures.js';

const skip = noCompiler();

// column 0 ints, column 1 reals (`w` a real value argument, 5); mode 1 crashes at b[1500], mode 2
// aborts there, mode 3 makes a[t] raw bytes every 400th step and a string at step 1 000, mode 4
// prints what every 700th step is told of its fragment and its DFs' names, mode 5 makes every
// step from step 1 000 on take 1.2 ms (longer than a worker's boot takes to be worth it)
const UCODES = `#include "ucenv.h"
#include <cstdio>
#include <ctime>
#include <string>
using namespace luna::ucenv;
static long num(const InputDF &d) {
  switch (d.get_type()) {
    case TYPE_INT: return d.get_int();
    case TYPE_REAL: return (long)d.get_real();
    case TYPE_VALUE: return d.getData<int>()[0];
    case TYPE_STRING: return std::stol(d.get_string());
    default: ABORT("unset input");
  }
}
extern "C" {
void c_init(int x, OutputDF &v) { v = x + 1; }
void c_step(int mode, int t, int x, double w, const InputDF &a, const InputDF &b, OutputDF &v) {
  const long r = (3 * num(a) + (long)(w * num(b)) + t + x) % 1000003;
  if (mode == 1 && t == 1500 && x == 1) { volatile int *p = nullptr; *p = 1; }
  if (mode == 2 && t == 1500 && x == 1) ABORT("bad step " << t);
  if (mode == 3 && x == 0 && t % 400 == 0) { int *p = v.create<int>(1); p[0] = (int)r; return; }
  if (mode == 3 && x == 0 && t == 1000) { v = std::to_string(r); return; }
  if (mode == 4 && t % 700 == 0) {
    const Context c = context();
    std::printf("%d: %s %s cf %d lane %d reads %s %s, writes %s\\n", t, c.label.c_str(), c.gid.c_str(), c.cf, c.lane, a.getName().c_str(), b.getName().c_str(), v.getName().c_str());
  }
  if (mode == 5 && t >= 1000) { timespec a0, a1; clock_gettime(CLOCK_MONOTONIC, &a0); do clock_gettime(CLOCK_MONOTONIC, &a1); while ((a1.tv_sec - a0.tv_sec) * 1000000000L + (a1.tv_nsec - a0.tv_nsec) < 1200000L); }
  if (x == 0) v = (int)r; else v = (double)r;
}
void c_print(int x, const InputDF &v) { std::printf("v[%d] = %ld\\n", x, num(v)); std::fflush(stdout); }
void c_next(const InputDF &a, OutputDF &v) { v = (int)((num(a) * 7 + 3) % 1000003); }
void c_show(int i, const InputDF &v) { if (i % 500 == 0) std::printf("x[%d] = %ld\\n", i, num(v)); }
}
`;

const PROGRAM = `import c_init(int \`x, name \`v) as init;
import c_step(int \`mode, int \`t, int \`x, real \`w, value \`a, value \`b, name \`v) as step;
import c_print(int \`x, value \`v) as print;
sub main(int steps, int mode, real w)
{
    df v;
    for x = 0..1 init(x, v[0][x]);
    for t = 1..steps {
        cf a[t]: step(mode, t, 0, w, v[t-1][0], v[t-1][1], v[t][0]);
        cf b[t]: step(mode, t, 1, w, v[t-1][0], v[t-1][1], v[t][1]);
    }
    for x = 0..1 print(x, v[steps][x]);
}
`;

// a chain whose every link is also read after the loop (req_count 2): each output leaves the
// loop, not only the last iteration's
const ESCAPES = `import c_init(int \`x, name \`v) as init;
import c_next(value \`a, name \`v) as next;
import c_show(int \`i, value \`v) as show;
sub main(int n)
{
    df x;
    init(0, x[0]);
    for i = 0..n-1
        next(x[i], x[i + 1]) @ { req_count x[i + 1] = 2; };
    for i = 1..n show(i, x[i]);
}
`;

/** What the program prints (mode 0 and 3: the same numbers), computed here. */
function expected(steps: number): string {
  let v = [1, 2];
  for (let t = 1; t <= steps; t++) v = [0, 1].map((x) => (3 * v[0]! + 5 * v[1]! + t + x) % 1000003);
  return v.map((y, x) => `v[${x}] = ${y}\n`).join('');
}

let dir = '';
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'luna-native-steps-'));
  writeFileSync(join(dir, 'ucodes.cpp'), UCODES);
  writeFileSync(join(dir, 'stencil.fa'), PROGRAM);
  writeFileSync(join(dir, 'escapes.fa'), ESCAPES);
});
after(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

/** `how`: planned and stepped natively where it can be, planned with JavaScript steps, unplanned */
const run = (args: string[], how: 'native' | 'js' | 'unplanned'): Promise<Run> =>
  luna(['run', '--timing', '--threads', '1', '--ucodes', join(dir, 'ucodes.cpp'), join(dir, 'stencil.fa'), ...args, '5'], {
    env: cleanEnv({ LUNA_CACHE_DIR: join(dir, 'cache'), LUNA_LOOP_PLANS: how === 'unplanned' ? '0' : '1', LUNA_NATIVE_STEPS: how === 'native' ? '1' : '0' }),
    timeoutMs: 180_000,
  });

const stats = (r: Run): { plannedInline: number; steppedNatively: number } => timingOf<{ plannedInline: number; steppedNatively: number }>(r);
const errors = (r: Run): string => r.stderr.split('\n').filter((l) => !l.startsWith('luna: timing:')).join('\n');

test('one thread: a planned loop of C++ ucodes stepped natively prints what its JavaScript steps and the unplanned path print', { skip }, async () => {
  // (compiled once: the runs after share the cache)
  const native = await run(['3000', '0'], 'native');
  const [js, unplanned] = await Promise.all([run(['3000', '0'], 'js'), run(['3000', '0'], 'unplanned')]);
  for (const r of [native, js, unplanned]) assertOk(r);
  assert.equal(native.stdout, expected(3000), describeRun(native));
  assert.equal(js.stdout, native.stdout, describeRun(js));
  assert.equal(unplanned.stdout, native.stdout, describeRun(unplanned));
  // all but the first steps (each code's first 64 calls are timed each) went natively
  assert.ok(stats(native).steppedNatively >= 5000, describeRun(native));
  assert.equal(stats(js).steppedNatively, 0, describeRun(js));
  assert.ok(stats(js).plannedInline >= 5998, describeRun(js));
});

test('one thread: a natively stepped C++ step that crashes or aborts is named as the JavaScript steps name it', { skip }, async () => {
  for (const [mode, cause] of [['1', /segmentation fault \(SIGSEGV\) in C\+\+ ucode c_step/], ['2', /bad step 1500/]] as const) {
    const [native, js] = await Promise.all([run(['3000', mode], 'native'), run(['3000', mode], 'js')]);
    for (const r of [native, js]) {
      assertFails(r, [cause, /in CF b\[1500\] \(ucode c_step, id 1_1500_1\)/]);
      assert.equal(r.stdout, '', describeRun(r));
    }
    assert.equal(errors(native), errors(js), describeRun(native));
    assert.ok(stats(native).steppedNatively >= 2000, describeRun(native));
  }
});

test('one thread: a natively stepped step whose output is raw bytes or a string hands back to JavaScript, and the loop prints the same', { skip }, async () => {
  const [native, js] = await Promise.all([run(['3000', '3'], 'native'), run(['3000', '3'], 'js')]);
  for (const r of [native, js]) assertOk(r);
  assert.equal(native.stdout, expected(3000), describeRun(native));
  assert.equal(js.stdout, native.stdout, describeRun(js));
  // stepped natively until the first raw output (step 400), in JavaScript after it
  const n = stats(native).steppedNatively;
  assert.ok(n >= 500 && n < 800, `stepped natively ${n}\n${describeRun(native)}`);
});

test('one thread: a natively stepped C++ step is told its fragment and its DFs\' names as the JavaScript steps and the unplanned path (inline, one CF at a time) tell them', { skip }, async () => {
  const [native, js, unplanned] = await Promise.all([run(['3000', '4'], 'native'), run(['3000', '4'], 'js'), run(['3000', '4'], 'unplanned')]);
  for (const r of [native, js, unplanned]) assertOk(r);
  assert.match(native.stdout, /^1400: b\[1400\] \S+ cf \d+ lane 1 reads v\[1399\]\[0\] v\[1399\]\[1\], writes v\[1400\]\[1\]$/m, describeRun(native));
  assert.equal(native.stdout, js.stdout, describeRun(native));
  assert.equal(native.stdout, unplanned.stdout, describeRun(unplanned));
  assert.ok(stats(native).steppedNatively >= 5000, describeRun(native));
});

test('one thread: a natively stepped loop whose code becomes long is measured so, and leaves the system thread', { skip }, async () => {
  const [native, js] = await Promise.all([run(['1600', '5'], 'native'), run(['1600', '5'], 'js')]);
  for (const r of [native, js]) assertOk(r);
  assert.equal(native.stdout, expected(1600), describeRun(native));
  assert.equal(js.stdout, native.stdout, describeRun(js));
  // stepped natively past step 1 000, until the code's sampled calls (onTimed) made its mean
  // long and a worker was booted for it; its steps were then sent there
  const n = stats(native).steppedNatively;
  assert.ok(n >= 1500 && n < 3000, `stepped natively ${n}\n${describeRun(native)}`);
  assert.ok(timingOf<{ sent: number }>(native).sent > 0, describeRun(native));
});

test('one thread: a planned loop of C++ ucodes whose every output is also read after the loop posts each iteration\'s own value', { skip }, async () => {
  // the addon's ring keeps the last iterations only: such a loop's outputs must not be taken from it
  const r = await luna(['run', '--timing', '--threads', '1', '--ucodes', join(dir, 'ucodes.cpp'), join(dir, 'escapes.fa'), '6000'], {
    env: cleanEnv({ LUNA_CACHE_DIR: join(dir, 'cache') }),
    timeoutMs: 180_000,
  });
  assertOk(r);
  let x = 1, want = '';
  for (let i = 1; i <= 6000; i++) { x = (x * 7 + 3) % 1000003; if (i % 500 === 0) want += `x[${i}] = ${x}\n`; }
  assert.equal(r.stdout, want, describeRun(r));
  assert.ok(stats(r).plannedInline >= 5900, describeRun(r));
});
