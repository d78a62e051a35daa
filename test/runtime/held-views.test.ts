// Freed raw DFs that workers held views of for a long time must give their memory back. A value
// read by many fragments on both worker lanes (test/runtime/programs/held_views: a 32 MiB DF a
// step, read by two chains of 8 readers, one on each lane) outlives the workers' scavenges, and
// from then on only a full collection on each worker frees its views and, with the last one, the
// buffer (exec/shm.ts). Each step's maker prints the shared bytes its thread made and has not
// freed yet (process.memoryUsage().arrayBuffers counts them per thread, wherever the views are):
// live, a few steps' DFs; the rest is garbage some thread did not collect. With recycling off
// (each freed buffer is the collector's) and 64 MB limits it rose by ~20 MiB a step until a
// worker's full collection, which came every 16th of its minor ones only: 397–577 MiB at the peak
// over 40 steps (4 runs); with the views a worker held through a minor collection counted towards
// its full ones, 196–247 MiB, but 337 once at load 12, when the two workers' full collections fell
// out of phase (a buffer is freed only once both have dropped their views). The test runs at 16 MB
// limits, where the two rules lie furthest apart: 60 steps at load 10–12, 147–199 MiB in 9 runs
// with the rule, 345–471 in 3 without it (AGED_SHARE made unreachable in a copy of the bundle).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertOk, describeRun, lines, luna, program, runArgs } from './helpers.js';

const FILE = program('held_views');

/**
 * Run held_views for `n` steps of `kib` KiB with `env`, check that every reader of every step ran
 * and checked its DF, and return the peak of what the makers' threads held (one line per step).
 */
async function peakMade(n: number, kib: number, okib: number, vary: boolean, env: Record<string, string>): Promise<{ peak: number; made: number[] }> {
  const r = await luna(runArgs(1, 2, { file: FILE, args: [String(n), '8', String(kib), String(okib), vary ? '1' : '0'] }), {
    timeoutMs: 120_000,
    env: { ...process.env, ...env },
  });
  assertOk(r);
  const out = lines(r.stdout);
  assert.ok(out.includes(`readers ${8 * n} ${8 * n} n=${n} kib=${kib}`), describeRun(r));
  const made = out.filter((l) => l.startsWith('made ')).map((l) => Number(/^made (\d+) MiB$/.exec(l)?.[1] ?? NaN));
  assert.equal(made.length, n, `one line per step\n${describeRun(r)}`);
  assert.ok(made.every((m) => Number.isFinite(m)), describeRun(r));
  return { peak: Math.max(...made), made };
}

describe('views of freed raw DFs held by workers', () => {
  test('60 steps of a 32 MiB DF read on both lanes: a thread\'s unfreed shared bytes stay under 280 MiB', async () => {
    const { peak, made } = await peakMade(60, 32768, 512, false, { LUNA_RECYCLE_MB: '0', LUNA_COLLECT_SHARED_MB: '16' });
    assert.ok(peak < 280, `a thread held ${peak} MiB of shared memory it made (of 1 920 MiB made in all, ~100 live at a time): freed DFs' buffers kept by views not collected\n${made.join(' ')}`);
  });

  // Recycling on, with small pools and b[s] of 24 sizes (1–4 MiB): the freed buffers fill the
  // system thread's pool, go on to the workers' with their batches, and the workers' pools drop
  // most of them. The system thread's views of a dropped buffer are old and keep its memory until
  // its next full collection, so it counts what the workers dropped (codec.ts decodeResult).
  // Counted only on the worker, a thread's unfreed shared bytes rose all run long, until the
  // system thread's own rare full collections: 196–599 MiB at the peak (4 runs, 400 steps), and
  // 108 / 182 at 200 steps; counted there too, 91 / 101.
  test('400 steps of freed buffers the workers\' pools drop: a thread\'s unfreed shared bytes stay under 160 MiB', async () => {
    const { peak, made } = await peakMade(400, 1024, 64, true, { LUNA_RECYCLE_MB: '16', LUNA_COLLECT_SHARED_MB: '32' });
    assert.ok(peak < 160, `a thread held ${peak} MiB of shared memory it made (~2.6 GiB made in all, ~10 live at a time, pools of 16 MB): dropped buffers kept by the system thread's views\n${made.join(' ')}`);
  });
});
