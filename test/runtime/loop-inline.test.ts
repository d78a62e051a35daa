// Loops planned on the system thread (src/runtime/node/loop-inline.ts): where a loop's tiny CFs
// run inline, its steps run as calls with their inputs taken from the earlier steps' outputs.
// On one thread they must print what the fragment-by-fragment path prints, in the same order
// (FIFO), stop and go on across the pump's turns, name a failing step as that path does, report
// a kept DF used again from outside as that path does, and leave a loop that would wait to it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertFails, assertOk, describeRun, LUNA, luna, timingOf, type Run } from './helpers.js';
import { OUTSIDE } from './plan-programs.js';
import { PROGRAM } from './stencil2.js';

// tiny ucodes: every CF runs on the system thread
const UCODES = `
type In = { getInt(): number };
type Out = { setInt(v: number): void };
export function c_init(x: number, v: Out): void { v.setInt(x + 1); }
export function c_step(kind: string, t: number, x: number, a: In, b: In, v: Out): void {
  if (kind === 'throw' && t === 37 && x === 1) throw new Error('boom at step ' + t);
  v.setInt((3 * a.getInt() + 5 * b.getInt() + t + x) % 1000003);
}
export function c_print(x: number, v: In): void { console.log('v[' + x + '] = ' + v.getInt()); }
export function c_start(v: Out): void { v.setInt(7); }
export function c_link(a: In, i: number, v: Out): void { v.setInt((a.getInt() * 31 + i) % 1000003); }
export function c_show(i: number, v: In): void { console.log('x[' + i + '] = ' + v.getInt()); }
export function c_say(i: number): void { console.log('say ' + i); }
// what a step is told of its DFs' names (a planned step's keys come from the loop's ring): every
// step checks them, a sample and any surprise are printed (a step printing every time is long on a
// loaded host, and the policy would move the steps to a lane)
export function c_named(a: In & { getName(): string }, i: number, v: Out & { getName(): string }): void {
  const told = i + ' ' + a.getName() + ' -> ' + v.getName();
  if (i % 97 === 1 || told !== i + ' x[' + i + '] -> x[' + (i + 1) + ']') console.log(told);
  v.setInt(a.getInt() + 1);
}
export function c_slow(a: In, i: number, v: Out): void {
  // long from step 200 on: the runtime stops running the steps here and boots a worker for them
  if (i >= 200) { const until = performance.now() + 2; while (performance.now() < until) { /* work */ } }
  v.setInt((a.getInt() * 31 + i) % 1000003);
}
`;

// a chain, its first input made before the loop, its last read after it; CFs printing around it
const CHAIN = `import c_start(name \`v) as start;
import c_link(value \`a, int \`i, name \`v) as link;
import c_show(int \`i, value \`v) as show;
import c_say(int \`i) as say;
sub main(int n)
{
    df x;
    say(1);
    start(x[0]);
    for i = 0..n-1
        cf l[i]: link(x[i], i, x[i + 1]) @ { req_count x[i + 1] = 1; };
    say(2);
    show(n, x[n]);
    say(3);
}
`;

// every output read inside the loop (by a later statement of its iteration, which prints it, and
// by the next iteration) and once after it: each escapes with one read left
const ESCAPING = `import c_start(name \`v) as start;
import c_link(value \`a, int \`i, name \`v) as link;
import c_show(int \`i, value \`v) as show;
import c_say(int \`i) as say;
sub main(int n)
{
    df x;
    start(x[0]);
    for i = 0..n-1 {
        cf l[i]: link(x[i], i, x[i + 1]) @ { req_count x[i + 1] = 3; };
        cf s[i]: show(i + 1, x[i + 1]);
    }
    say(0);
    for i = 1..n show(i, x[i]);
}
`;

// the stencil with its outputs freed by count: kept inside the loop, never in the store
const COUNTED = PROGRAM.replace(/v\[t\]\[(\d)\]\);/g, 'v[t][$1]) @ { req_count v[t][$1] = 2; };');

let dir = '';
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'luna-inline-plans-'));
  writeFileSync(join(dir, 'ucodes.ts'), UCODES);
  writeFileSync(join(dir, 'stencil.fa'), PROGRAM);
  writeFileSync(join(dir, 'counted.fa'), COUNTED);
  writeFileSync(join(dir, 'chain.fa'), CHAIN);
  writeFileSync(join(dir, 'escaping.fa'), ESCAPING);
  writeFileSync(join(dir, 'slow.fa'), CHAIN.replace('c_link(value', 'c_slow(value'));
  writeFileSync(join(dir, 'named.fa'), CHAIN.replace('c_link(value', 'c_named(value'));
  // column 1's first value is never made: every step waits for it
  writeFileSync(join(dir, 'hang.fa'), PROGRAM.replace('for x = 0..1 init(x, v[0][x]);', 'for x = 0..0 init(x, v[0][x]);'));
});
after(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

const run = (file: string, args: string[], plans: '0' | '1', threads = '1'): Promise<Run> =>
  luna(['run', '--timing', '--threads', threads, join(dir, file), ...args], { env: { ...process.env, LUNA_LOOP_PLANS: plans }, timeoutMs: 90_000 });

const plannedInline = (r: Run): number => timingOf<{ plannedInline: number }>(r).plannedInline;

test('one thread: a stencil, a chain and escaping outputs print the same, in the same order, planned inline and not', async () => {
  // 30 000 links: the loop stops at the end of many of the pump's turns and goes on from there
  const cases: [string, string[], number][] = [['stencil.fa', ['300', 'ok'], 600], ['counted.fa', ['300', 'ok'], 600], ['chain.fa', ['30000'], 30_000], ['escaping.fa', ['500'], 1000]];
  for (const [file, args, steps] of cases) {
    const [on, off] = await Promise.all([run(file, args, '1'), run(file, args, '0')]);
    for (const r of [on, off]) assertOk(r);
    assert.ok(on.stdout.length > 0, describeRun(on));
    assert.equal(on.stdout, off.stdout, `${file}\n${describeRun(on)}`);
    // every step planned but the loop's first (a loop is examined once before it goes on)
    assert.ok(plannedInline(on) >= steps - 2, `${file}: planned inline ${plannedInline(on)} of ${steps}\n${describeRun(on)}`);
    assert.equal(plannedInline(off), 0, describeRun(off));
    // outputs read up inside the loop are recorded as spent by numbers, not key by key (the
    // counted stencil's and the chain's; a turn's stop posts its last iteration's, and the
    // stencil with unlimited outputs and the escaping loop keep none)
    const kept = timingOf<{ plannedKept: number }>(on).plannedKept;
    if (file === 'counted.fa' || file === 'chain.fa') assert.ok(kept >= 0.9 * steps, `${file}: kept by numbers ${kept} of ${steps}\n${describeRun(on)}`);
    else assert.equal(kept, 0, `${file}\n${describeRun(on)}`);
  }
});

test('one thread: a planned inline step is told the names of its input and output DFs, as unplanned', async () => {
  // 3 000 links: steps of every slot of the loop's ring, across several of the pump's turns
  const [on, off] = await Promise.all([run('named.fa', ['3000'], '1'), run('named.fa', ['3000'], '0')]);
  for (const r of [on, off]) assertOk(r);
  assert.match(on.stdout, /^1 x\[1\] -> x\[2\]$/m, describeRun(on));
  // the sample alone: steps 1, 98, …, 2911
  assert.equal(on.stdout.match(/^\d+ x\[/gm)?.length, 31, describeRun(on));
  assert.equal(on.stdout, off.stdout, describeRun(on));
  assert.ok(plannedInline(on) >= 2998, describeRun(on));
});

// the named chain with C++ ucodes: the direct form asks the loop for a DF's name by the number it was given
const NAMED_CPP = `#include "ucenv.h"
#include <cstdio>
using namespace luna::ucenv;
extern "C" {
void c_start(OutputDF &v) { v.setValue<int>(7); }
void c_named(const InputDF &a, int i, OutputDF &v) { if (i % 997 == 1) std::printf("%d %s -> %s\\n", i, a.getName().c_str(), v.getName().c_str()); v.setValue<int>((a.getValue<int>() * 31 + i) % 1000003); }
void c_show(int i, const InputDF &v) { std::printf("x[%d] = %d\\n", i, v.getValue<int>()); }
void c_say(int i) { std::printf("say %d\\n", i); }
}
`;

test('one thread: a planned inline C++ step is told the names of its input and output DFs, as unplanned', async () => {
  writeFileSync(join(dir, 'named.cpp'), NAMED_CPP);
  const go = (plans: '0' | '1'): Promise<Run> => luna(['run', '--timing', '--threads', '1', '--ucodes', join(dir, 'named.cpp'), join(dir, 'named.fa'), '3000'], { env: { ...process.env, LUNA_LOOP_PLANS: plans }, timeoutMs: 90_000 });
  const [on, off] = await Promise.all([go('1'), go('0')]);
  for (const r of [on, off]) assertOk(r);
  assert.match(on.stdout, /^998 x\[998\] -> x\[999\]$/m, describeRun(on));
  assert.equal(on.stdout, off.stdout, describeRun(on));
  assert.ok(plannedInline(on) >= 2998, describeRun(on));
});

test('one thread: the planned loop\'s optimised body survives the pump\'s turns (no wrong-map deoptimisation at a turn\'s set-up)', async () => {
  // V8 compiles on this thread when asked (--no-concurrent-recompilation), so the loop's body is
  // optimised at the same call in every run, and the turns after it run that code. An array a
  // turn's set-up made with Array.prototype.map had another map once TurboFan inlined the map:
  // the optimised body then deoptimised ('wrong map') at every turn after it was compiled.
  const r = await luna(['run', '--timing', '--threads', '1', join(dir, 'counted.fa'), '3000', 'ok'], {
    command: [process.execPath, '--trace-deopt', '--no-concurrent-recompilation', LUNA], env: { ...process.env, LUNA_LOOP_PLANS: '1' }, timeoutMs: 90_000,
  });
  assertOk(r);
  assert.ok(plannedInline(r) >= 5998, describeRun(r));
  const wrongMap = r.stdout.split('\n').filter((l) => /^\[bailout .*reason: wrong map\).*<JSFunction run /.test(l));
  assert.deepEqual(wrongMap, [], describeRun(r));
});

test('two threads with tiny codes: the loop runs planned inline, and prints the same', async () => {
  const [on, off] = await Promise.all([run('counted.fa', ['300', 'ok'], '1', '2'), run('counted.fa', ['300', 'ok'], '0', '2')]);
  for (const r of [on, off]) assertOk(r);
  assert.equal(on.stdout, off.stdout, describeRun(on));
  assert.ok(plannedInline(on) >= 598, describeRun(on));
});

test('one thread: a loop whose code becomes long goes on unplanned, on the worker, and prints the same', async () => {
  // (1 600 steps: three sampled long calls boot the worker, ~step 250, and the steps leave once
  // it is up, ~step 300 at load 4; how soon is became-long.test's)
  const [on, off] = await Promise.all([run('slow.fa', ['1600'], '1'), run('slow.fa', ['1600'], '0')]);
  for (const r of [on, off]) assertOk(r);
  assert.equal(on.stdout, off.stdout, describeRun(on));
  // Not asserted: that the first 200 steps went planned. Under load a descheduled early call can
  // boot the worker before the loop is planned, and then none of it is (seen in 1 of 3 runs of
  // this test beside two more at load 7); the tests above assert planning itself.
  assert.ok(plannedInline(on) < 1600, `planned inline ${plannedInline(on)}\n${describeRun(on)}`);
  assert.ok(timingOf<{ sent: number }>(on).sent > 0, describeRun(on));
});

test('one thread: a planned inline step that throws names the step as the unplanned path does', async () => {
  const [on, off] = await Promise.all([run('stencil.fa', ['200', 'throw'], '1'), run('stencil.fa', ['200', 'throw'], '0')]);
  for (const r of [on, off]) {
    assertFails(r, [/exception in ucode c_step: boom at step 37/, /in CF b\[37\] \(ucode c_step, id 1_37_1\)/]);
    assert.doesNotMatch(r.stdout, /v\[/);
  }
  assert.ok(plannedInline(on) > 0, describeRun(on));
});

test('one thread: a loop whose first steps wait is left to the unplanned path, and its hang reported as there', async () => {
  const [on, off] = await Promise.all([run('hang.fa', ['300', 'ok'], '1'), run('hang.fa', ['300', 'ok'], '0')]);
  const errors = (r: Run): string => r.stderr.split('\n').filter((l) => !l.startsWith('luna: timing:')).join('\n');
  for (const r of [on, off]) assertFails(r, [/the program hangs/, /CF a\[1\] \(ucode c_step, id 1_1_0\) at [^\n]*hang\.fa:9:9 waits for v\[0\]\[1\]\n/]);
  assert.equal(errors(on), errors(off), describeRun(on));
  // (only the one-step loop before it, which waits for nothing)
  assert.equal(plannedInline(on), 1, describeRun(on));
});

test('one thread: a DF kept inside a loop planned inline, read or assigned again from outside it, is reported as unplanned', async () => {
  const tails = ['later(x[n], x, 1000);', 'show(n, x[n]); show(1000, x[1000]);', 'again(x[n], x, 1000);', 'show(n, x[n]); start(x[1000]);'];
  for (const [k, tail] of tails.entries()) {
    const file = `misuse-${k}.fa`;
    writeFileSync(join(dir, file), OUTSIDE(`    ${tail}`));
    const [on, off] = await Promise.all([run(file, ['2000'], '1'), run(file, ['2000'], '0')]);
    const errors = (r: Run): string => r.stderr.split('\n').filter((l) => !l.startsWith('luna: timing:')).join('\n');
    for (const r of [on, off]) assertFails(r, [/x\[1000\]/]);
    assert.equal(errors(on), errors(off), `${tail}\n${describeRun(on)}`);
    assert.ok(plannedInline(on) > 1000, `${tail}: planned inline ${plannedInline(on)}\n${describeRun(on)}`);
  }
});
