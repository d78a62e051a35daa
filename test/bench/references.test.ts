// The references row of the scheduling bench (bench/scheduling.ts, bench/programs/refs): its
// program runs with 1 and with 32 DFs in and out of each CF and frees every DF it makes, and the
// system thread's CPU of the two runs splits into a cost a CF and a cost a DF reference.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { referenceCosts } from '../../bench/scheduling.js';
import { runFile } from '../runtime/files.js';

test('the system thread\'s CPU of the two runs gives back the costs a CF and a reference it was made of', () => {
  const NT = 40, W = 8, perCf = 0.07, perRef = 0.008; // ms
  const sys = (R: number): number => perCf * (W * R + NT * W) + perRef * (W * R + NT * W * 2 * R);
  const split = referenceCosts(NT, W, sys(1), sys(32));
  assert.ok(Math.abs(split.perCf - 70) < 1e-6, `${split.perCf} µs a CF`);
  assert.ok(Math.abs(split.perRef - 8) < 1e-6, `${split.perRef} µs a reference`);
  // nothing a reference: all of it is the CFs'
  assert.ok(Math.abs(referenceCosts(NT, W, 10 * (W + NT * W), 10 * (32 * W + NT * W)).perRef) < 1e-9);
});

test('the references program runs with 1 and with 32 DFs in and out of each CF, on 1 and 2 lanes, and holds none to the end', async () => {
  for (const R of ['1', '32']) for (const lanes of [1, 2]) {
    const r = await runFile('bench/programs/refs/refs.fa', { lanes, args: ['3', '4', R, '0', '64'] });
    assert.equal(r.ok, true, `R = ${R}, ${lanes} lanes: ${r.message}`);
    for (const n of r.nodes) assert.deepEqual(n.rt.unspentKeys(), [], `R = ${R}: a DF held to the end`);
  }
});
