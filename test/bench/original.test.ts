// The side-by-side with the original LuNA (bench/original.ts), without the original: reading a
// run's output (the ucodes' timestamps, GNU time's line), medians and ratios, the alternated METG
// sweep, and the C++ that prints the timestamps, compiled and run for real.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compare, parseKernelUs, parseRun, parseSpanMs, parseTime, ratio, SPAN_CPP, type FigureDef, type Sample } from '../../bench/original/spans.js';
import { CASES, fixedAndSteady, SPLITS } from '../../bench/original.js';
import { ORIGINAL_SIDE_BY_SIDE } from '../../bench/reference.js';
import { machinePeak, metg, sweepPoints } from '../../bench/taskbench/sweep.js';
import { FLOP_PER_ITERATION } from '../../bench/taskbench/kernel.js';
import { COMPUTE_BOUND_CPP, ucodesCpp } from '../../bench/taskbench/generate.js';
import { bareCpp, bareCppFlops, buildBareCpp } from '../../bench/taskbench/bare-cpp.js';
import { CXXFLAGS, lunaTsEnv, originalCompileEnv } from '../../bench/original/runner.js';

test('the span runs from the earliest begin to the latest end, whatever else the processes print', () => {
  const out = [
    'rank 1 says hello',
    'luna-span begin 5000000',
    'luna-span begin 4000000', // the other rank began first
    'luna-span end 9000000',
    'luna-span end 10500000',
    'luna-time 0.91 14800',
  ].join('\n');
  assert.equal(parseSpanMs(out), 6.5);
  assert.throws(() => parseSpanMs('luna-span end 3\n'), /no 'luna-span begin'/);
  assert.throws(() => parseSpanMs('luna-span begin 3\n'), /no 'luna-span end'/);
  assert.throws(() => parseSpanMs('luna-span begin 9\nluna-span end 3\n'), /before/);
  // a timestamp inside another line is not one
  assert.throws(() => parseSpanMs('x luna-span begin 1\nluna-span end 3\n'), /no 'luna-span begin'/);
});

test('the kernels\' CPU time: per process its fullest report, summed over processes, as µs per task', () => {
  const out = [
    'luna-kernel 101 3000000 30', // an early check of process 101
    'luna-kernel 202 5000000 50',
    'luna-kernel 101 8000000 80', // its last check: the other column's last tasks had ended
    'x luna-kernel 303 1 1', // inside another line: not one
  ].join('\n');
  assert.equal(parseKernelUs(out), (8_000_000 + 5_000_000) / (80 + 50) / 1000);
  assert.equal(parseKernelUs('luna-span begin 1\n'), undefined);
  const withKernel = parseRun('luna-span begin 1000000\nluna-kernel 7 4000 2\nluna-span end 3000000\nluna-time 0.5 100\n');
  assert.deepEqual(withKernel, { spanMs: 2, wallMs: 500, maxRssKB: 100, kernelUs: 2 });
});

test("GNU time's line gives wall ms and peak KiB; the last one counts", () => {
  assert.deepEqual(parseTime('luna-time 9.99 1\nprogram output\nluna-time 1.25 20480\n'), { wallMs: 1250, maxRssKB: 20480 });
  assert.throws(() => parseTime('Command exited with non-zero status 1\n'), /no 'luna-time' line/);
  assert.deepEqual(parseRun('luna-span begin 1000000\nluna-span end 3000000\nluna-time 0.5 100\n'), { spanMs: 2, wallMs: 500, maxRssKB: 100 });
});

test('a figure is the median of each side, scaled, and the ratio is luna-ts / original', () => {
  const perCf: FigureDef = { key: 'chain.usPerCf', metric: 'spanMs', scale: 1000 / 20_000, unit: 'µs', label: '' };
  const s = (spanMs: number, maxRssKB = 0): Sample => ({ spanMs, wallMs: 0, maxRssKB });
  const v = compare(perCf, [s(80), s(60), s(70)], [s(200), s(40), s(50)]);
  assert.deepEqual(v, { original: 3.5, lunaTs: 2.5, ratio: 2.5 / 3.5 });
  const mem: FigureDef = { key: 'x.peakMB', metric: 'maxRssKB', scale: 1 / 1024, unit: 'MB', label: '' };
  assert.equal(compare(mem, [s(0, 2048)], [s(0, 1024)]).ratio, 0.5);
  // one side not measured: no ratio
  assert.ok(Number.isNaN(compare(perCf, [], [s(1)]).ratio));
  assert.ok(Number.isNaN(ratio(1, 0)));
  assert.ok(Number.isNaN(ratio(NaN, 2)));
});

test('every kept figure of the original is one the side-by-side produces, and the rows are distinct', () => {
  const keys = new Set([...CASES.flatMap((c) => c.figures.map((f) => f.key)), 'metg.1x2.stencil_1d.us', 'metg.2x1.stencil_1d.us']);
  for (const k of Object.keys(ORIGINAL_SIDE_BY_SIDE)) assert.ok(keys.has(k), `kept figure ${k} is produced by no row`);
  assert.equal(new Set(CASES.map((c) => c.id)).size, CASES.length);
});

test('a short and a long row split into a fixed cost and a steady cost per fragment', () => {
  // 2 ms fixed + 3 µs a fragment, at 4 000 and 40 000 fragments
  const v = fixedAndSteady(2 + 4000 * 0.003, 4000, 2 + 40_000 * 0.003, 40_000);
  assert.ok(Math.abs(v.usPerCf - 3) < 1e-9 && Math.abs(v.fixedMs - 2) < 1e-9, JSON.stringify(v));
  // a long row cheaper per fragment than the short one's fixed cost can pay for: a negative steady cost is reported as measured
  assert.ok(fixedAndSteady(100, 1000, 50, 10_000).usPerCf < 0);
  // each split pairs two rows of one program at one placement, the long one with more fragments
  for (const sp of SPLITS) {
    const a = CASES.find((c) => c.id === sp.short), b = CASES.find((c) => c.id === sp.long);
    assert.ok(a && b, `split ${sp.id}: rows ${sp.short} and ${sp.long}`);
    assert.deepEqual(a.at, b.at, sp.id);
    assert.equal(a.program.replace(/\d+k$/, ''), b.program.replace(/\d+k$/, ''), sp.id);
    assert.ok(a.figures[0]!.scale > b.figures[0]!.scale, `${sp.id}: the long row has more fragments`);
  }
});

test('the METG sweep alternates the systems point by point, each against its own peak, and stops each once bracketed', async () => {
  const tasks = 2000, cores = 2;
  const calls: string[] = [];
  // each system's span: the work at its own speed plus a fixed cost per task (µs)
  const system = (name: string, usPerIter: number, overheadUs: number) => async (iters: number): Promise<number> => {
    calls.push(`${name}${iters}`);
    return (tasks * (iters * usPerIter + overheadUs)) / cores / 1000;
  };
  const peakSpan = { fast: (tasks * 1024 * 0.1) / cores / 1000, slow: (tasks * 1024 * 0.2) / cores / 1000 };
  const peak = { fast: (tasks * 1024 * FLOP_PER_ITERATION) / (peakSpan.fast / 1000), slow: (tasks * 1024 * FLOP_PER_ITERATION) / (peakSpan.slow / 1000) };
  const pts = await sweepPoints({ fast: system('fast', 0.1, 5), slow: system('slow', 0.2, 100) }, { tasks, cores, fromK: 9, reps: 2, peak });
  // alternated: fast slow, slow fast at each point while both run
  assert.deepEqual(calls.slice(0, 4), ['fast512', 'slow512', 'slow512', 'fast512']);
  // the slower-per-task system drops out earlier, below 30 % efficiency
  assert.ok(pts.slow.length < pts.fast.length);
  assert.ok(pts.slow.at(-1)!.efficiency < 0.3 && pts.fast.at(-1)!.efficiency < 0.3);
  // METG at 50 %: the task where the fixed cost equals the work (granularity = 2 × overhead)
  assert.ok(Math.abs(metg(pts.fast).us - 10) < 2, `fast METG ${metg(pts.fast).us}`);
  assert.ok(Math.abs(metg(pts.slow).us - 200) < 40, `slow METG ${metg(pts.slow).us}`);
});

test('the METG by busy share: from the kernels\' CPU time, whatever the kernel\'s speed in each run', async () => {
  const tasks = 2000, cores = 2, overheadUs = 50;
  // the kernel's speed flips 2× from run to run (this host's); the runtime's cost per task does not
  let run = 0;
  const flipping = async (iters: number) => {
    const kernelUs = iters * (run++ % 2 ? 0.05 : 0.1);
    return { spanMs: (tasks * (kernelUs + overheadUs)) / cores / 1000, kernelUs };
  };
  const peak = (tasks * 4096 * FLOP_PER_ITERATION) / ((tasks * 4096 * 0.05) / cores / 1000 / 1000);
  const pts = await sweepPoints({ luna: flipping }, { tasks, cores, fromK: 12, reps: 1, peak: { luna: peak } });
  // busy = kernel ÷ (kernel + overhead): 50 % where the kernel's own time equals the overhead
  for (const p of pts.luna) assert.ok(p.busy !== undefined && p.busy > 0 && p.busy < 1);
  const m = metg(pts.luna, 0.5, 'busy');
  assert.ok(Math.abs(m.us - 2 * overheadUs) < 0.35 * 2 * overheadUs, `busy METG ${m.us}`);
  // a run without kernel reports gives no busy METG, never a made-up one
  const spansOnly = await sweepPoints({ s: async (iters: number) => (tasks * (iters * 0.1 + overheadUs)) / cores / 1000 }, { tasks, cores, fromK: 10, reps: 1, peak: { s: peak } });
  assert.ok(Number.isNaN(metg(spansOnly.s, 0.5, 'busy').us));
});

test('the Task Bench C++ kernels print the span only when asked: begin in the first tasks, end in the checks', () => {
  const marked = ucodesCpp([0, 2], { span: SPAN_CPP });
  assert.match(marked, /void c_task0\([^)]*\) \{ luna_span_begin\(\);/);
  assert.doesNotMatch(marked, /void c_task2\([^)]*\) \{ luna_span_begin/);
  assert.match(marked, /void c_done\([^)]*\) \{ luna_span_end\(\);/);
  assert.doesNotMatch(marked, /luna_span_end\(\); \}\n/);
  assert.doesNotMatch(ucodesCpp([0, 2]), /luna_span|luna_kernel|luna_timed/);
  // with the span, every task times its kernel and the checks report the total
  assert.match(marked, /void c_task2\([^)]*\) \{ out\.setValue<double>\(luna_timed_kernel\(iters\)/);
  assert.match(marked, /void c_done\([^)]*\) \{ luna_span_end\(\); luna_kernel_report\(\);/);
  // trivial: the checks may run before the last tasks, so every task marks an end
  assert.match(ucodesCpp([0], { span: SPAN_CPP, endInTasks: true }), /void c_task0\([^)]*\) \{ luna_span_begin\(\); .* luna_span_end\(\); \}/);
});

test('the timestamp C++ compiles and prints what the parser reads: one begin per process, every end', () => {
  const dir = mkdtempSync(join(tmpdir(), 'luna-span-cpp-'));
  try {
    writeFileSync(join(dir, 'm.cpp'), `${SPAN_CPP}
#include <unistd.h>
int main() {
  luna_span_begin(); luna_span_begin(); usleep(20000);
  long long t0 = luna_thread_ns(); volatile double x = 0; for (int i = 0; i < 20000000; i++) x = x + 1; luna_kernel_add(luna_thread_ns() - t0);
  luna_kernel_add(0); luna_kernel_report();
  luna_span_end(); luna_span_end(); return 0;
}
`);
    const cc = spawnSync('g++', ['-O2', '-o', join(dir, 'm'), join(dir, 'm.cpp')], { encoding: 'utf8' });
    assert.equal(cc.status, 0, cc.stderr);
    const r = spawnSync(join(dir, 'm'), { encoding: 'utf8' });
    assert.equal(r.status, 0);
    assert.equal(r.stderr.match(/^luna-span begin \d+$/gm)?.length, 1);
    assert.equal(r.stderr.match(/^luna-span end \d+$/gm)?.length, 2);
    const ms = parseSpanMs(r.stderr);
    assert.ok(ms >= 19 && ms < 5000, `span ${ms} ms around a 20 ms sleep`);
    // two kernels: a busy loop and nothing; the sleep is not CPU time
    const k = parseKernelUs(r.stderr);
    assert.ok(k !== undefined && k > 0 && k * 2 < (ms - 19) * 1000 + 1, `${k} µs per kernel in a ${ms} ms span\n${r.stderr}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the bare C++ kernel (the METG peak) compiles from the ucodes\' kernel text and counts its FLOP', () => {
  assert.ok(ucodesCpp([0]).includes(COMPUTE_BOUND_CPP.join('\n')), 'the ucodes carry the same kernel text');
  const dir = mkdtempSync(join(tmpdir(), 'luna-bare-kernel-'));
  try {
    const exe = buildBareCpp(dir, '-O3');
    for (const threads of [1, 2]) {
      const f = bareCppFlops(exe, threads, 3, 1 << 10);
      assert.ok(Number.isFinite(f) && f > 0, `${threads} thread(s): ${f} FLOP/s`);
      // its kernel's thread CPU per task, as the ucodes report theirs: more for more iterations
      const short = bareCpp(exe, threads, 20, 1 << 8).kernelUs, long = bareCpp(exe, threads, 20, 1 << 14).kernelUs;
      assert.ok(short > 0 && long > 4 * short, `${threads} thread(s): ${short} µs at 2^8, ${long} µs at 2^14`);
    }
    assert.throws(() => bareCppFlops(join(dir, 'missing'), 1, 1, 1));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('both systems and the bare peak kernel are compiled with the same flags', () => {
  assert.match(CXXFLAGS, /(^| )-O3( |$)/);
  // the original's driver takes extra flags from CXX_FLAGS, luna-ts from LUNA_CXXFLAGS
  assert.equal(originalCompileEnv('/opt/luna', { PATH: '/usr/bin' }).CXX_FLAGS, CXXFLAGS);
  assert.equal(originalCompileEnv('/opt/luna', { PATH: '/usr/bin' }).PATH, '/opt/luna/bin:/usr/bin');
  assert.equal(lunaTsEnv({ LUNA_CXXFLAGS: '-O0' }).LUNA_CXXFLAGS, CXXFLAGS);
});

test("the comparison's flags start the kernel's inner loop on a 64-byte boundary, wherever the kernel lands", () => {
  // the same instructions ran 1.75× slower at some offsets from a 64-byte boundary on this host;
  // each build places the kernel differently, so the flags must fix where its loop starts
  const dir = mkdtempSync(join(tmpdir(), 'luna-bare-align-'));
  try {
    const exe = buildBareCpp(dir, CXXFLAGS);
    const dis = spawnSync('objdump', ['-d', '--no-show-raw-insn', exe], { encoding: 'utf8', maxBuffer: 64 << 20 });
    assert.equal(dis.status, 0, dis.stderr);
    const fn = /^[0-9a-f]+ <_ZL13compute_boundl>:\n([\s\S]*?)\n\n/m.exec(dis.stdout);
    assert.ok(fn, 'compute_bound in the bare kernel');
    // the innermost loops with the multiply-add: each backward jump whose body holds a mulpd and no other jump
    const insns = [...fn[1]!.matchAll(/^\s*([0-9a-f]+):\s+(\S+)\s*(.*)$/gm)].map((m) => ({ at: parseInt(m[1]!, 16), op: m[2]!, arg: m[3]! }));
    const heads: number[] = [];
    for (const i of insns) {
      const target = /^([0-9a-f]+) </.exec(i.arg);
      if (!i.op.startsWith('j') || !target) continue;
      const head = parseInt(target[1]!, 16);
      const body = insns.filter((x) => x.at >= head && x.at < i.at);
      if (head < i.at && body.some((x) => /mulpd|fmadd/.test(x.op)) && !body.some((x) => x.op.startsWith('j'))) heads.push(head);
    }
    assert.ok(heads.length > 0, 'a multiply-add loop in compute_bound');
    for (const h of heads) assert.equal(h % 64, 0, `the loop at 0x${h.toString(16)} starts ${h % 64} bytes past a 64-byte boundary`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the METG's peak is the best FLOP/s of the run's measurements of the kernel, bare or in a system", () => {
  assert.equal(machinePeak({ bare: 9e9, original: 12e9, lunaTs: 10e9 }), 12e9);
  assert.equal(machinePeak({ bare: 9e9, original: NaN, lunaTs: undefined }), 9e9);
  assert.ok(Number.isNaN(machinePeak({ bare: NaN })));
  assert.ok(Number.isNaN(machinePeak({})));
});
