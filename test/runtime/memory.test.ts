// Memory stays flat on a long chain freed by req_count: 2000 links each producing a 1 MiB raw
// DF read once (req_count 1). The last CF prints the peak resident set of its process
// (VmHWM, every page of every link is written). Without freeing, 2000 links would need 2 GiB;
// the same chain without req_count (-D KEEP, shorter) shows the difference is real.
//
// Large buffers reuse freed memory (LUNA_KEEP_FREED_MB, native/memory.c): rounds of 32 shared
// buffers, each round's a little larger than the last (DFs of varying size), are touched, freed
// and collected; the page faults of the later rounds show whether fresh pages were mapped.
//
// Worker threads keep V8's default young generation under bin/luna's small one for the system
// thread: a ucode that keeps many objects alive a while reports how far its new space grew.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertOk, describeRun, lines, luna, program, runArgs, type Run } from './helpers.js';
import { addonPath } from '../../src/core/addon.js';

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

  // 800 links: with req_count the peak is what the collections let accumulate between them
  // (raw DFs dropped are counted and collected every few tens of MB per thread: 110–282 MiB over
  // 400-link runs on Node 20 and 24), without it the whole chain (~880 MiB); at 400 links the two
  // came within 217 MiB of each other once
  test('800 links: without req_count the peak is ≥ 400 MiB higher than with it (2 threads)', async () => {
    const [freed, kept] = await Promise.all([
      luna(runArgs(1, 2, { file: CHAIN, args: ['800', '1024'] }), { timeoutMs: 60_000 }),
      luna(runArgs(1, 2, { file: CHAIN, args: ['800', '1024'], defines: ['KEEP'] }), { timeoutMs: 60_000 }),
    ]);
    assertOk(freed);
    assertOk(kept);
    const pf = peak(freed.stdout), pk = peak(kept.stdout);
    assert.ok(pk >= 800, `the variant without req_count should hold all 800 MiB (peak ${pk} MiB)\n${describeRun(kept)}`);
    assert.ok(pk - pf >= 400, `with req_count ${pf} MiB, without ${pk} MiB: freeing makes no real difference\n${describeRun(freed)}\n${describeRun(kept)}`);
  });

  // LUNA_COLLECT_SHARED_MB (exec/shm.ts): how much shared memory the system thread drops between
  // the full collections it forces (a worker collects its young generation every eighth of it);
  // 600 MiB churned peaks at 222–241 MiB under a 16 MB limit, 392–404 under 512 and 441–570 under
  // 1024 (V8's own collections, which external memory also triggers, cap it at times): a setting
  // that did not reach the collections would leave the two peaks within a few tens of MiB
  test('the collections follow LUNA_COLLECT_SHARED_MB: 600 links of 1 MiB peak ≥ 120 MiB higher under 1024 MB than under 16', async () => {
    // (with nothing recycled: a recycled buffer is not garbage, and the chain then peaks low either way)
    const at = (mb: number): Promise<Run> => luna(runArgs(1, 1, { file: CHAIN, args: ['600', '1024'] }), { timeoutMs: 60_000, env: { ...process.env, LUNA_COLLECT_SHARED_MB: String(mb), LUNA_RECYCLE_MB: '0' } });
    const [small, large] = await Promise.all([at(16), at(1024)]);
    assertOk(small);
    assertOk(large);
    const ps = peak(small.stdout), pl = peak(large.stdout);
    assert.ok(pl - ps >= 120, `peak ${ps} MiB under 16 MB, ${pl} MiB under 1024 MB: the setting does not reach the collections\n${describeRun(small)}\n${describeRun(large)}`);
  });
});

/** Page faults of each round in a fresh process (first round: the heap grows; later: reuse). */
function roundFaults(keepMb: string): { on: boolean; per: number[] } {
  const shm = new URL('../../src/runtime/exec/shm.js', import.meta.url).href;
  const script = `const { keepFreedMemory } = await import(${JSON.stringify(shm)});
const on = keepFreedMemory();
const faults = () => process.resourceUsage().minorPageFault;
// a round's buffers live in its own frame, gone before gc(): on Node 24 (V8 13, Maglev) a loop
// variable set to null still held the previous round across the await, so one round in a few
// found nothing freed and mapped fresh pages with or without the policy
function round(size) {
  const f0 = faults(), live = [];
  for (let i = 0; i < 32; i++) { const b = new Uint8Array(new SharedArrayBuffer(size)); for (let o = 0; o < size; o += 4096) b[o] = 1; live.push(b); }
  return faults() - f0;
}
const per = [];
for (let r = 0; r < 6; r++) {
  per.push(round((1 << 20) + r * 65536));
  gc();
  await new Promise((r) => setTimeout(r, 20));
}
console.log(JSON.stringify({ on, per }));`;
  const r = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { encoding: 'utf8', env: { ...process.env, LUNA_KEEP_FREED_MB: keepMb }, timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as { on: boolean; per: number[] };
}

describe('freed memory is reused for the next large buffers', () => {
  test('with the policy later rounds fault in under a quarter of the pages they would without it', (t) => {
    const on = roundFaults('1024'), off = roundFaults('0');
    assert.equal(off.on, false, 'LUNA_KEEP_FREED_MB=0 leaves the C library\'s policy');
    if (addonPath('luna_memory') === undefined || process.platform !== 'linux') {
      // not built (no compiler at install) or not glibc: the policy is off, and says so
      assert.equal(on.on, false);
      t.diagnostic('luna_memory addon not built here: only the fallback was checked');
      return;
    }
    assert.equal(on.on, true, 'the policy is in force where the addon is built (glibc)');
    const later = (x: { per: number[] }): number => x.per.slice(1).reduce((a, b) => a + b, 0);
    const pages = 5 * 32 * 256; // what the later rounds touch, at least
    assert.ok(later(off) >= pages * 0.8, `without the policy the later rounds should map fresh pages: ${JSON.stringify(off.per)}`);
    assert.ok(later(on) < later(off) / 4, `with the policy ${JSON.stringify(on.per)}, without ${JSON.stringify(off.per)}: freed memory was not reused`);
  });
});

/** heapStats() in a fresh process before and after it makes (and keeps) `mib` MiB of shared buffers. */
function heapAround(mib: number): { before?: Record<string, number>; after?: Record<string, number>; arenas: { nr: number; held: number; free: number }[] } {
  const shm = new URL('../../src/runtime/exec/shm.js', import.meta.url).href;
  const addon = new URL('../../src/core/addon.js', import.meta.url).href;
  const script = `const { heapStats, parseArenas } = await import(${JSON.stringify(shm)});
const { loadAddon } = await import(${JSON.stringify(addon)});
const before = heapStats();
const keep = [];
for (let i = 0; i < ${mib}; i++) { const b = new Uint8Array(new SharedArrayBuffer(1 << 20)); b.fill(1); keep.push(b); }
const after = heapStats();
const xml = loadAddon('luna_memory')?.heapInfo?.() ?? '';
console.log(JSON.stringify({ before, after, arenas: parseArenas(xml), kept: keep.length }));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', env: { ...process.env, LUNA_KEEP_FREED_MB: '0' }, timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as ReturnType<typeof heapAround>;
}

describe('the C heap counts (LUNA_HEAP_LOG)', { concurrency: true }, () => {
  test('heapStats counts the shared buffers a process makes; malloc_info lists its arenas', (t) => {
    const h = heapAround(64);
    if (addonPath('luna_memory') === undefined || process.platform !== 'linux') {
      assert.equal(h.before, undefined, 'without the addon there are no counts, and no error');
      t.diagnostic('luna_memory addon not built here: only the fallback was checked');
      return;
    }
    const { before, after } = h;
    assert.ok(before && after, 'glibc with the addon built gives counts');
    const held = (s: Record<string, number>): number => s.inUse! + s.mmapped!;
    const grew = (held(after) - held(before)) / 2 ** 20;
    // (not exactly 64: the process frees and makes other blocks meanwhile; Node 24 read 63.96)
    assert.ok(grew >= 60 && grew < 96, `64 MiB of buffers kept, the heap's in-use and mapped bytes grew ${grew.toFixed(1)} MiB`);
    assert.ok(after.arena! >= after.inUse!, `an arena holds at least what is in use in it: ${JSON.stringify(after)}`);
    assert.ok(h.arenas.length >= 1 && h.arenas.some((a) => a.nr === 0 && a.held > 0), `malloc_info names the main arena: ${JSON.stringify(h.arenas)}`);
  });

  test('a run with LUNA_HEAP_LOG writes one line a sample: resident and heap bytes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'luna-heaplog-'));
    try {
      const file = join(dir, 'heap.log');
      const r = await luna(runArgs(1, 2, { file: CHAIN, args: ['200', '1024'] }), { timeoutMs: 60_000, env: { ...process.env, LUNA_HEAP_LOG: file, LUNA_HEAP_LOG_MS: '5' } });
      assertOk(r);
      const [head, ...rows] = lines(readFileSync(file, 'utf8'));
      const counted = addonPath('luna_memory') !== undefined && process.platform === 'linux';
      assert.match(head!, counted ? /^t_ms rss_mb arena_mb inuse_mb free_mb mmap_mb/ : /no heap counts/);
      assert.ok(rows.length >= 2, `at least one timed sample and the one at exit: ${rows.length}`);
      const cols = rows.map((l) => l.split(' '));
      const peakRss = Math.max(...cols.map((c) => Number(c[1])));
      assert.ok(peakRss >= 40, `the resident set of a run that holds 1 MiB buffers: ${peakRss} MB`);
      if (!counted) return;
      for (const c of cols) {
        const [arena, inUse, free] = [Number(c[2]), Number(c[3]), Number(c[4])];
        assert.ok(Math.abs(arena - inUse - free) <= 0.2, `in use + free = what the arenas hold: ${c.join(' ')}`);
        assert.match(c[6] ?? '', /^\d+:[\d.]+\/[\d.]+$/, `each line names its arenas: ${c.join(' ')}`);
      }
      // every link's 1 MiB buffer is made in this process's C heap: some sample saw one in use
      const peakHeld = Math.max(...cols.map((c) => Number(c[3]) + Number(c[5])));
      assert.ok(peakHeld >= 1, `peak in use + mapped ${peakHeld} MB`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('young generations', () => {
  test('under the system thread\'s 2 MB semi-spaces a worker\'s new space still grows past them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'luna-young-'));
    try {
      writeFileSync(join(dir, 'ucodes.ts'), `import { getHeapSpaceStatistics } from 'node:v8';
import { isMainThread } from 'node:worker_threads';
export function c_churn(n: number): void {
  let keep: { i: number; s: string }[] = [];
  for (let i = 0; i < n; i++) { keep.push({ i, s: 'x' + i }); if (keep.length > 200_000) keep = []; }
  const ns = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')!;
  console.log((isMainThread ? 'main ' : 'worker ') + ns.space_size);
}
`);
      writeFileSync(join(dir, 'p.fa'), 'import c_churn(int `n) as churn;\nsub main(int n) { churn(n); }\n');
      // --cf-timeout: nothing runs on the system thread, the CF goes to a worker
      const r = await luna(['run', '--threads', '1', '--cf-timeout', '60s', join(dir, 'p.fa'), '3000000'], {
        command: [process.execPath, '--max-semi-space-size=2', join('bin', 'luna')], timeoutMs: 60_000,
      });
      assertOk(r);
      const m = /^worker (\d+)$/m.exec(r.stdout);
      assert.ok(m, `no report from a worker\n${describeRun(r)}`);
      // 2 MB semi-spaces would hold the new space at 4 MB
      assert.ok(Number(m[1]) > 8 * 2 ** 20, `the worker's new space stayed at ${m[1]} bytes: it got the system thread's semi-spaces\n${describeRun(r)}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
