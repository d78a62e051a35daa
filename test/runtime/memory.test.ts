// Memory stays flat on a long chain freed by req_count: 2000 links each producing a 1 MiB raw
// DF read once (req_count 1). The last CF prints the peak resident set of its process
// (VmHWM, every page of every link is written). Without freeing, 2000 links would need 2 GiB;
// the same chain without req_count (-D KEEP, shorter) shows the difference is real.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertOk, describeRun, lines, luna, program, runArgs } from './helpers.js';

const CHAIN = program('chain_mem');

function peak(stdout: string): number {
  const l = lines(stdout).find((s) => s.startsWith('peak '));
  const m = l ? /^peak (\d+) MiB$/.exec(l) : null;
  assert.ok(m, `no peak line in ${JSON.stringify(stdout)}`);
  return Number(m[1]);
}

describe('memory on a long chain freed by req_count', { concurrency: true }, () => {
  test('2000 links of 1 MiB with req_count 1: peak RSS < 600 MiB', async () => {
    const r = await luna(runArgs(1, 1, { file: CHAIN, args: ['2000', '1024'] }), { timeoutMs: 60_000 });
    assertOk(r);
    assert.ok(lines(r.stdout).includes('chain ok n=2000'), describeRun(r));
    const p = peak(r.stdout);
    assert.ok(p < 600, `peak RSS ${p} MiB for 2000 links of 1 MiB: DFs freed by req_count are not released\n${describeRun(r)}`);
  });

  test('400 links: without req_count the peak is ≥ 250 MiB higher than with it (2 threads)', async () => {
    const [freed, kept] = await Promise.all([
      luna(runArgs(1, 2, { file: CHAIN, args: ['400', '1024'] }), { timeoutMs: 60_000 }),
      luna(runArgs(1, 2, { file: CHAIN, args: ['400', '1024'], defines: ['KEEP'] }), { timeoutMs: 60_000 }),
    ]);
    assertOk(freed);
    assertOk(kept);
    const pf = peak(freed.stdout), pk = peak(kept.stdout);
    assert.ok(pk >= 400, `the variant without req_count should hold all 400 MiB (peak ${pk} MiB)\n${describeRun(kept)}`);
    assert.ok(pk - pf >= 250, `with req_count ${pf} MiB, without ${pk} MiB: freeing makes no real difference\n${describeRun(freed)}\n${describeRun(kept)}`);
  });
});
