// A wrong bench setting (an environment variable naming rows) is said as one message and a
// non-zero exit, never a stack trace: the user mends the setting, not the bench. It is said
// before anything is measured (no machine probe, no suite started), not after a minute of probes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const RUN = fileURLToPath(new URL('../../bench/run.js', import.meta.url));

for (const [suite, name, value, says] of [
  ['original', 'BENCH_ORIGINAL_ROWS', 'nope', /BENCH_ORIGINAL_ROWS: no row nope \(rows: startup, /],
  ['pic', 'LUNA_PIC_ROWS', 'bad', /LUNA_PIC_ROWS must be <small\|seed>:<1x1\|1x2\|2x1>.*got "bad"/],
  ['pic', 'LUNA_PIC_XSEQ_PAIRS', 'many', /LUNA_PIC_XSEQ_PAIRS must be a whole number of pairs from 0 to 100, got "many"/],
  ['taskbench', 'BENCH_TASKBENCH_TARGET', 'yes', /BENCH_TASKBENCH_TARGET: 1 \(the target's row alone\) or 0, not "yes"/],
] as const) {
  test(`${name}=${value}: the suite says what is wrong, without a stack, and the bench exits 1`, () => {
    const env: NodeJS.ProcessEnv = { ...process.env, [name]: value };
    delete env.LUNA_ORIGINAL;
    const r = spawnSync(process.execPath, [RUN, suite, '--reps', '1', '--no-save'], { encoding: 'utf8', env, timeout: 300_000 });
    const out = r.stdout + r.stderr;
    assert.equal(r.status, 1, out);
    assert.match(out, says);
    assert.doesNotMatch(out, /^\s+at .*\.js:\d+:\d+\)?$/m, 'no stack trace');
    assert.doesNotMatch(out, /^machine: /m, 'said before the machine probes');
    assert.doesNotMatch(out, /^=== /m, 'said before any suite ran');
  });
}
