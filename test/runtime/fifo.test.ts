// FIFO order with one worker thread (docs/language.md §8.3): ready CFs run in the order they were
// queued; the children of a CF are queued in fork order after its step; a CF that had to wait
// is queued at the back when its input arrives; a CF whose inputs exist runs in its place.
// With more threads only the set of output lines is fixed.
import { describe, test } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { assertOk, describeRun, lines, luna, program, runArgs, sorted } from './helpers.js';

interface Ordered { name: string; file: string; args?: string[]; out: string[]; why: string }

const ORDERED: Ordered[] = [
  {
    name: 'fifo.fa: sub and for children after the parent, a waiting CF at the back, >> flags read in place',
    file: program('fifo'),
    // queue [a, two(S), for, w, p, b, g, h, two(T)]: a prints; two(S) queues S.1 S.2; for queues
    // F1 F2; w waits for x; p sets x, so w is queued behind F2; b; g sets flag; h finds it and runs
    // in place; two(T) queues T.1 T.2 behind w.
    out: ['A', 'P sets x', 'B', 'G', 'H flag 1', 'S.1', 'S.2', 'F1', 'F2', 'W x 5', 'T.1', 'T.2'],
    why: 'docs/language.md §8.3',
  },
  {
    name: 'setdfs.fa: readers of >> flags run in their place, the sub body after',
    file: program('setdfs'),
    // queue [a, b, c, greet, d]: a posts f, g[2]; b and c find them; greet queues inner and
    // posts h; d finds h; inner runs last.
    out: ['a', 'f 1 size 4', 'g2 1 size 4', 'h 1 size 4', 'sub'],
    why: 'docs/language.md §8.3, §4.3.7 (>> after a sub call is posted when the sub CF is spawned)',
  },
  {
    name: 'afterpush.fa: the push target waits, then goes to the back of the queue',
    file: program('afterpush'),
    // queue [c, p, for]: c waits for the push; p pushes x, c is queued behind for; for queues
    // q1 u1 q2 u2 q3 u3 behind c; c prints; each u[i] finds its pushed value.
    out: ['c 7', 'u1 10', 'u2 20', 'u3 30'],
    why: 'docs/language.md §8.3, §4.4.10 push mode',
  },
  {
    name: 'strings.fa: for children run after the statements queued before them',
    file: program('strings'),
    args: ['bob'],
    out: ['n=42', 'r=0.500000', 'bob!5', 'q-3', 'User_1', 'User_2', 'User_3', 'hi bob'],
    why: 'docs/language.md §8.3',
  },
  {
    name: 'unlimited.fa: readers in loop order',
    file: program('unlimited'),
    out: [...Array.from({ length: 40 }, (_, k) => `r${k + 1} 3`), ...Array.from({ length: 5 }, (_, k) => `s${k + 1} 4`)],
    why: 'docs/language.md §8.3',
  },
];

describe('FIFO order with --threads 1', { concurrency: true }, () => {
  for (const c of ORDERED) {
    test(c.name, async () => {
      const r = await luna(runArgs(1, 1, c));
      assertOk(r);
      assert.deepEqual(lines(r.stdout), c.out, `exact order expected (${c.why})\n${describeRun(r)}`);
    });
  }
  test('fifo.fa: the same order on every run (5 runs)', async () => {
    const runs = await Promise.all([1, 2, 3, 4, 5].map(() => luna(runArgs(1, 1, { file: program('fifo') }))));
    for (const r of runs) { assertOk(r); assert.deepEqual(lines(r.stdout), lines(runs[0]!.stdout), describeRun(r)); }
  });
});

describe('the same output as a set with --threads 2', { concurrency: true }, () => {
  for (const c of ORDERED) {
    test(c.name, async () => {
      const r = await luna(runArgs(1, 2, c));
      assertOk(r);
      assert.deepEqual(sorted(lines(r.stdout)), sorted(c.out), describeRun(r));
    });
  }
});

test('2 nodes × 1 thread: a CF placed on another node leaves at once, not after the CFs queued ahead of it', async () => {
  // a (node 0) waits for a file that b (node 1), queued behind a, creates
  const dir = mkdtempSync(join(tmpdir(), 'luna-leave-'));
  try {
    const r = await luna(runArgs(2, 1, { file: program('leave'), args: [dir] }));
    assertOk(r);
    assert.deepEqual(lines(r.stdout), ['b ran first'], describeRun(r));
  } finally { rmSync(dir, { recursive: true, force: true }); }
});
