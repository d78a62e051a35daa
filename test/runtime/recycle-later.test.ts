// A CF whose ucode asks its node without waiting (globalCount(P, into), ucode/dda.ts) completes
// after its batch's result was booked: its outputs are posted when the answer comes. When one of
// them shares the buffer of an input that was only forwarded to it (copy() of a value made by
// the CF before it in the same batch, read by nothing else), no holder counted that input but
// the batch, and once the batch closed the buffer went to the pool (poisoned: LUNA_RECYCLE_POISON)
// while the copy still waited to be posted; its reader then read 0xFF words (3 runs of 3, on one
// worker thread). Now the desk holds such a CF's raw outputs until it completes (shm.ts rawAwaited).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fixture, runWithResource, UCODE_API } from '../ucode/fixtures.js';

// read once, when the runtime's modules load: so before they are imported
process.env.LUNA_RECYCLE_MB = '64';
process.env.LUNA_RECYCLE_POISON = '1';
const { dynamicArrays } = await import('../../src/runtime/dda/index.js');
const { recycling } = await import('../../src/runtime/exec/shm.js');

const API = JSON.stringify(UCODE_API);

// raw[i] makes x[i] (read once: by count[i], which the batch builder puts after raw[i] on the same
// worker, so x[i] is forwarded); count[i] copies x[i] into y[i] and asks the count without waiting
const PROGRAM = `
import c_make(name \`P) as make;
import c_raw(int \`i, int \`kib, name \`x) as raw;
import c_count(value \`P, value \`x, int \`i, name \`n, name \`y) as count : WAITS;
import c_check(value \`y, value \`n, int \`i, int \`kib) as check;

sub main(int k, int kib)
{
    df P, x, n, y;
    make(P);
    for i = 0..k-1 {
        cf r[i]: raw(i, kib, x[i]) @ { req_count x[i] = 1; };
        cf c[i]: count(P, x[i], i, n[i], y[i]) @ { req_count y[i] = 1; };
        cf h[i]: check(y[i], n[i], i, kib);
    }
}
`;

const UCODES = `
import { dynamicArray, globalCount } from ${API};
export function c_make(P) { P.setValue(dynamicArray('P', { elsize: 8 })); }
/** kib KiB, every word i + 1 (and a few ms of work, so that it runs on a worker) */
export function c_raw(i, kib, x) {
  const a = x.createInt32Array(kib * 256);
  for (let r = 0; r < 8; r++) a.fill(i + 1);
}
export function c_count(P, x, i, n, y) {
  y.copy(x);
  globalCount(P, n);
}
export function c_check(y, n, i, kib) {
  const a = y.getInt32Array();
  if (a.length !== kib * 256) throw new Error('y[' + i + '] has ' + a.length + ' words');
  for (let j = 0; j < a.length; j++) if (a[j] !== i + 1) throw new Error('y[' + i + '] word ' + j + ' reads ' + a[j] + ', not ' + (i + 1) + ': its buffer was recycled while the copy waited for the count');
  if (n.getInt() !== 0) throw new Error('count ' + n.getInt());
}
`;

test('a copy() of a forwarded input by a CF that asks without waiting is not recycled before the CF completes (poison on)', async (t) => {
  const dir = fixture(t, { 'prog.fa': PROGRAM, 'ucodes.ts': UCODES });
  const before = { ...recycling };
  const ran = await runWithResource(dir, { nodes: 1, threads: 1, args: ['40', '256'], layers: [dynamicArrays()] });
  const r = ran.results[0]!;
  assert.equal(r.ok, true, r.message);
  // the run did recycle (the copies' buffers, once their readers freed them)
  assert.ok(recycling.recycled - before.recycled >= 10, `recycled ${recycling.recycled - before.recycled}`);
});
