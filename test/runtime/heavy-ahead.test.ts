// On several nodes, a node whose one lane runs a batch of heavy fragments sends on what is queued
// behind it for other nodes (expanding the loops that make it) instead of holding it until the
// batch ends: real node processes over sockets, the heavy fragments waiting for a file that only
// those fragments, on node 1, write.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeRun, lines, luna, program } from './helpers.js';

test('two nodes, one thread: the fragments for node 1 queued behind a heavy batch reach it while the batch runs', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'luna-heavy-ahead-'));
  try {
    // held until the batch ended, each of the first batch's four waits would run out (40 s)
    const r = await luna(['run', '--nodes', '2', '--threads', '1', program('heavy_ahead')], {
      env: { ...process.env, LUNA_HEAVY_AHEAD_DIR: dir, LUNA_HEAVY_AHEAD_MS: '10000' }, timeoutMs: 180_000,
    });
    assert.equal(r.status, 0, describeRun(r));
    const out = lines(r.stdout);
    for (let i = 0; i < 8; i++) assert.ok(out.includes(`h${i} seen`), `h${i} saw node 1's mark\n${describeRun(r)}`);
    assert.ok(out.includes('m0') && out.includes('m1'), describeRun(r));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
