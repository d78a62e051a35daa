// The tiering probe's minimal runtime (bench/raw-tiering.ts): each program runs to its checked
// end (the chain's last value is n, the stencil's finite; a runtime that loses or misorders a
// value fails its check and exits non-zero), and a run marks the windows it reaches.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const PROBE = fileURLToPath(new URL('../../bench/raw-tiering.js', import.meta.url));
const run = (...args: string[]) => spawnSync(process.execPath, [PROBE, 'run', ...args], { encoding: 'utf8', timeout: 60_000 });

test('tiering probe: a chain and a stencil run to their checked end, marking the windows they reach', () => {
  for (const [kind, n, marks] of [['chain', 1500, 3], ['stencil', 600, 3]] as const) {
    const r = run(kind, String(n));
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { spanMs: number; marks: number[]; cpuMs: number; waitMs: number };
    assert.ok(out.spanMs > 0, `${kind}: span ${out.spanMs}`);
    // fragments 1, 100 and 1 000 (the stencil's 600 steps are 1 198 tasks after the first step)
    assert.equal(out.marks.length, marks, `${kind}: marks ${JSON.stringify(out.marks)}`);
    for (let i = 1; i < out.marks.length; i++) assert.ok(out.marks[i]! >= out.marks[i - 1]!, `${kind}: marks in order`);
    assert.ok(out.marks[out.marks.length - 1]! <= out.spanMs);
  }
});

test('tiering probe: a wrong program or size is refused with a message, not a stack', () => {
  for (const args of [['ring', '100'], ['chain', 'x'], ['chain', '1']]) {
    const r = run(...args);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /raw-tiering: run chain\|stencil N/);
    assert.doesNotMatch(r.stderr, /\n\s+at /);
  }
});
