// A fed batch closes once the raw outputs its CFs make reach the policy's bound (fedBatchBytes,
// LUNA_FED_BATCH_MB): they, and the freed buffers they back, stay until the batch returns.
// held_views (test/runtime/programs/held_views) steps a 1 MiB DF read by two chains of 8 readers
// that pass 64 KiB tokens on, one chain a lane: a fed pass chained dozens of its steps into one
// batch per lane (200–320 CFs, ~37 steps: docs/benchmarks.md, "The FIFO start of several lanes
// against held_views' long fed batches"), in nearly every run at least one of 129 CFs or more.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assertOk, describeRun, luna, program, timingOf } from './helpers.js';

const MiB = 1048576;

test('a fed batch stops at the raw bytes the policy allows: held_views\' fed batches at a 1 MiB bound', async () => {
  // --cf-timeout runs every CF on a worker (no inline executor): under load the workers booted
  // after the system thread had run all 200 steps itself, and no batch was fed
  const r = await luna(['run', '--timing', '--cf-timeout', '60s', '--threads', '2', program('held_views'), '200', '8', '1024', '64', '0'], {
    timeoutMs: 120_000,
    env: { ...process.env, LUNA_RECYCLE_MB: '16', LUNA_COLLECT_SHARED_MB: '32', LUNA_FED_BATCH_MB: '1' },
  });
  assertOk(r);
  assert.ok(r.stdout.includes('readers 1600 1600 n=200 kib=1024'), describeRun(r));
  const t = timingOf<{ fed: number; fedBytesMax: number }>(r);
  assert.ok(t.fed > 0, `the chains were fed across the lanes\n${describeRun(r)}`);
  // closed at 1 MiB or more: at most the bound plus the CF that reached it (a 1 MiB DF and its token)
  assert.ok(t.fedBytesMax > 0 && t.fedBytesMax < 1 * MiB + 1 * MiB + 64 * 1024 * 2, `a fed batch returned ${t.fedBytesMax} bytes of raw outputs\n${describeRun(r)}`);
});
