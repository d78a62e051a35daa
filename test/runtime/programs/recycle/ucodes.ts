import type { DF } from '../../../../src/ucode/df.js';

/** Bytes of x[i]: three sizes, each varying a little (values of one size class and of several). */
export function sizeOf(i: number): number {
  return [6000, 70000, 400000][i % 3]! + (i % 5) * 40;
}

/** Word j of x[i]'s pattern. */
const word = (i: number, j: number): number => (Math.imul(i + 1, 0x9e3779b1) ^ Math.imul(j, 0x85ebca6b)) | 0;

let checks = 0;

export function c_make(i: number, x: DF, t: DF): void {
  const a = x.createInt32Array(sizeOf(i) / 4);
  // create() promises zeros, also when the buffer is a freed DF's
  for (let j = 0; j < a.length; j++) if (a[j] !== 0) throw new Error(`x[${i}]: create() gave a buffer whose word ${j} is ${a[j]}, not 0`);
  for (let j = 0; j < a.length; j++) a[j] = word(i, j);
  t.setInt(i);
}

function verify(x: DF, i: number, who: string): void {
  const a = x.getInt32Array();
  if (a.length !== sizeOf(i) / 4) throw new Error(`${who} x[${i}]: ${a.length} words, not ${sizeOf(i) / 4}`);
  for (let j = 0; j < a.length; j++) {
    if (a[j] !== word(i, j)) throw new Error(`${who} x[${i}]: word ${j} is ${a[j]}, not ${word(i, j)} (its buffer was reused while it was live)`);
  }
  // hold the lane a little, so that batches stay in flight while others free their values
  const until = Date.now() + 0.2;
  while (Date.now() < until) { /* spin */ }
  checks++;
}

export function c_check(x: DF, i: number): void { verify(x, i, 'check'); }

export function c_later(x: DF, t: DF, i: number): void {
  if (i < 1000000 && t.getInt() !== i + 3) throw new Error(`later ${i}: t is ${t.getInt()}`);
  verify(x, i, 'later');
}

/** z[i + 1]: z[i]'s bytes as x[1000000 + i + 1]'s pattern (checked first). */
export function c_step(z: DF, i: number, w: DF): void {
  verify(z, 1000000 + i, 'step');
  const a = w.createInt32Array(sizeOf(1000000 + i + 1) / 4);
  for (let j = 0; j < a.length; j++) a[j] = word(1000000 + i + 1, j);
}

export function c_alias(x: DF, y: DF): void { y.copy(x); }

export function c_done(n: number): void {
  console.log(`recycle ok n=${n}`);
}
