import type { DF } from '../../../../src/ucode/df.js';

function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

/** 64 KiB of words: recycled (over RECYCLE_MIN), small enough for the pools of a test */
const WORDS = 16 * 1024;

// Long enough for the other worker to boot before the fragments it enables are ready.
export function c_start(x: DF): void { busy(300); x.setInt(1); }

/** a[i]: every word i; a few ms of work */
export function c_make(_x: DF, i: number, a: DF): void {
  a.createInt32Array(WORDS).fill(i);
  busy(3);
}

/** a[i] read back whole: a buffer reused while it was still read would hold poison or another's words */
export function c_check(a: DF, i: number, ok: DF): void {
  const v = a.getInt32Array();
  busy(3);
  if (v.length !== WORDS || v.some((w) => w !== i)) throw new Error(`a[${i}] read wrong: ${v[0]}, ${v[v.length - 1]}`);
  ok.setInt(1);
}

export function c_done(n: number, _x: DF): void {
  console.log(`made and checked ${n}`);
}
