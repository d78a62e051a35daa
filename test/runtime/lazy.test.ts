// Lazy unrolling of long loops (several threads): bounded memory must never cost a deadlock.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

const LUNA = resolve('bin/luna');
const PROG = resolve('test/runtime/programs/backward/backward.fa');

test('a loop whose first iterations wait for its last one completes with 2 threads', () => {
  const n = 40_000; // well beyond the live-CF target of the lazy unroller
  const r = spawnSync(process.execPath, [LUNA, 'run', '--threads', '2', PROG, String(n)], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), `x[0] = ${n}`);
});

test('the same with one thread (eager unrolling, FIFO order) and on 2 nodes', () => {
  for (const extra of [['--threads', '1'], ['--nodes', '2', '--threads', '2']]) {
    const r = spawnSync(process.execPath, [LUNA, 'run', ...extra, PROG, '3000'], { encoding: 'utf8', timeout: 120_000 });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), 'x[0] = 3000');
  }
});
