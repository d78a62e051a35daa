// The contract for a fed output set before its ucode ends: a CF that faults after setting an
// output feeds nobody (its consumer on the other lane never starts, and the run fails naming the
// producer), and a producer that works on long after setting its output gives the same results.
// It holds today because values are handed out after the ucode returns; a runtime that hands
// them out as they are set must keep it (docs/benchmarks.md, "Handing a fed value out as the
// ucode sets it"). Without a gate, such a runtime printed 'ran step 21' here (checked). Real
// worker threads.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BOOT_ONLY, assertFails, assertSameLines, describeRun, luna, type Run } from './helpers.js';
import { PROGRAM, expected } from './stencil2.js';

// ~1 ms of work a step keeps the CFs on the workers (tiny codes run on the system thread). At
// step LATE, point 1 sets its output and then works 150 ms more (kind 'slow') or throws (kind
// 'fault'); every CF of the step after it says that it ran.
const LATE = 20;
const UCODES = `
import { isMainThread } from 'node:worker_threads';
type In = { getInt(): number };
type Out = { setInt(v: number): void };
const work = (ms: number): void => { const until = performance.now() + ms; while (performance.now() < until) { /* work */ } };
export function c_init(x: number, v: Out): void { v.setInt(x + 1); }
export function c_step(kind: string, t: number, x: number, a: In, b: In, v: Out): void {
  if (t === ${LATE + 1} && kind === 'fault') console.log('ran step ' + t + ' at ' + x);
  work(1);
  v.setInt((3 * a.getInt() + 5 * b.getInt() + t + x) % 1000003);
  if (isMainThread || t !== ${LATE} || x !== 1) return;
  work(150);
  if (kind === 'fault') throw new Error('fault after setting step ' + t);
}
export function c_print(x: number, v: In): void { console.log('v[' + x + '] = ' + v.getInt()); }
`;

let dir = '';
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'luna-early-'));
  writeFileSync(join(dir, 'ucodes.ts'), UCODES);
  writeFileSync(join(dir, 'p.fa'), PROGRAM);
});
after(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

// long fed batches: the requests for a step's outputs reach its lane before it runs
const run = (kind: string): Promise<Run> =>
  luna(['run', '--threads', '2', '--warm-start', join(dir, 'p.fa'), '40', kind], { env: { ...process.env, ...BOOT_ONLY, LUNA_FED_RUN_MS: '1000' }, timeoutMs: 120_000 });

test('a CF that faults after setting its output feeds nobody: the run fails naming it, and its consumers never start', async () => {
  const r = await run('fault');
  assertFails(r, [/exception in ucode c_step: fault after setting step 20/, /in CF b\[20\] \(ucode c_step/]);
  assert.doesNotMatch(r.stdout, /ran step/, `a CF ran on the value of the CF that faulted\n${describeRun(r)}`);
});

test('a producer that works on after setting its output gives the same results', async () => {
  assertSameLines(await run('slow'), expected(40));
});
