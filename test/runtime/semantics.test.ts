// Runtime semantics (docs/language.md §4.3, §8.4 and the luna-ts positions): each rule and each
// error case is a small fixture program run through the real CLI on one node with one worker
// thread. The same fixtures run on 1..3 nodes with 1..2 threads in multinode.test.ts.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  assertFails, assertSameLines, CASES, describeRun, FIXTURES_USED_ELSEWHERE, lines, luna, program, runArgs,
} from './helpers.js';

describe('runtime semantics on one node, one thread', { concurrency: true }, () => {
  for (const c of CASES) {
    test(c.name, async () => {
      const r = await luna(runArgs(1, 1, c));
      if (c.out) assertSameLines(r, c.out);
      else {
        assertFails(r, c.fails ?? [], c.status);
        for (const l of [...c.stdoutHas ?? [], ...c.stdoutHasFifo ?? []]) assert.ok(lines(r.stdout).includes(l), `stdout should contain ${JSON.stringify(l)}\n${describeRun(r)}`);
      }
    });
  }

  test('double assignment with one thread: the second writer (w2, twice.fa:9:5) is named', async () => {
    const r = await luna(runArgs(1, 1, { file: program('twice') }));
    assertFails(r, [/\bDF a\b[^\n]*assigned twice/, /CF w2 \(ucode c_set, id [\d_]+\)[^\n]* at [^\n]*twice\.fa:9:5/]);
  });

  test('double assignment with one thread: no reader sees the rejected second value', async () => {
    // FIFO: w1 runs first, so a = 1; w2's value is refused. A reader that ran must print "a 1".
    const r = await luna(runArgs(1, 1, { file: program('twice') }));
    assert.equal(r.status, 1, describeRun(r));
    assert.ok(lines(r.stdout).every((l) => l === 'a 1'), `a reader saw a value that was never a's value\n${describeRun(r)}`);
  });

  test('ucode exception: 20000 lines printed before the error all reach a slowly read stdout pipe', async () => {
    const n = 20000;
    // the test reads stdout only after 500 ms, like a slow consumer (a pager, a busy parent)
    const r = await luna(runArgs(1, 1, { file: program('exception'), args: [String(n), '2'] }), { slowReaderMs: 500 });
    assertFails(r, [/kaboom in boom 2/, /CF boom\[2\]/, /exception\.fa:13:9/]);
    const out = lines(r.stdout);
    const got = out.filter((l) => l.startsWith('line '));
    assert.equal(got.length, n, `lost output: ${got.length} of ${n} lines\n${describeRun(r)}`);
    assert.equal(got[n - 1], `line ${n}`);
    assert.ok(out.includes('boom 2 runs'), describeRun(r));
  });

  test('a successful run: 20000 lines printed by a ucode all reach a slowly read stdout pipe', async () => {
    const n = 20000;
    const r = await luna(runArgs(1, 1, { file: program('exception'), args: [String(n), '0'] }), { slowReaderMs: 500 });
    assert.equal(r.status, 0, describeRun(r));
    const out = lines(r.stdout);
    const got = out.filter((l) => l.startsWith('line '));
    assert.equal(got.length, n, `lost output: ${got.length} of ${n} lines\n${describeRun(r)}`);
    for (const l of ['before the error', 'boom 1 runs', 'boom 2 runs', 'boom 3 runs']) assert.ok(out.includes(l), describeRun(r));
  });

  test('ucode exception with 2 threads: same message; the lines printed are a gap-free prefix', async () => {
    // With 2 threads the CF printing the lines may still run when boom[2] fails: whatever it
    // printed must arrive whole (no line lost in the middle).
    const r = await luna(runArgs(1, 2, { file: program('exception'), args: ['500', '2'] }));
    assertFails(r, [/kaboom in boom 2/, /CF boom\[2\] \(ucode c_explode, id [\d_]+\)[^\n]* at [^\n]*exception\.fa:13:9/]);
    const got = lines(r.stdout).filter((l) => l.startsWith('line '));
    assert.deepEqual(got, got.map((_, k) => `line ${k + 1}`), describeRun(r));
    assert.ok(lines(r.stdout).includes('boom 2 runs'), describeRun(r));
  });

  test('a write callback in a worker ucode gets null, as from a Node Writable, and runs before the ucode returns', async () => {
    // --cf-timeout runs every fragment on a worker thread, where ucode output is written synchronously
    const r = await luna(['run', '--threads', '1', '--cf-timeout', '60s', program('writecb')]);
    assertSameLines(r, ['write 1', 'callback null', 'write 2', 'callback null', 'write 3', 'callback null']);
  });

  test('driver form: luna -q -D USE_DELETE --worker-threads-count=1 prog.fa', async () => {
    const r = await luna(['-q', '-D', 'USE_DELETE', '--worker-threads-count=1', program('destroy_pos')]);
    assertFails(r, [/positive requests? count/i, /CF r1 [^\n]*destroy_pos\.fa:10:5/]);
  });

  test('driver form with program arguments: luna --worker-threads-count=1 if.fa 4', async () => {
    const r = await luna(['--worker-threads-count=1', program('if'), '4']);
    assertSameLines(r, ['big', 'k is 8']);
    assert.equal(r.stderr, '', describeRun(r));
  });

  test('a successful run adds nothing to stdout or stderr', async () => {
    const r = await luna(runArgs(1, 2, { file: program('reqcount') }));
    assertSameLines(r, ['r1 5', 'r2 5', 's1 7', 's2 7', 's3 7']);
    assert.equal(r.stderr, '', describeRun(r));
  });
});

test('every fixture program is used by a test', () => {
  const used = new Set([...CASES.map((c) => c.file), ...FIXTURES_USED_ELSEWHERE.map(program)]);
  const dirs = readdirSync(join('test', 'runtime', 'programs'), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => program(d.name));
  assert.deepEqual(dirs.filter((f) => !used.has(f)), []);
});
