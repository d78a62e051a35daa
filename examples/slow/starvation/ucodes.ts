// Atomic code fragments of examples/slow/starvation/starvation.fa.
import type { DF } from '../../../src/ucode/df.js';

/** Busy-spin `us` microseconds on the wall clock (performance.now()), never sleep. */
export function spin(us: number): void {
  if (us <= 0) return;
  const end = performance.now() + us / 1000;
  while (performance.now() < end);
}

/**
 * Fixed work: `iters` rounds of an integer hash (no memory traffic). Returns a value that the
 * caller stores in `sink`, so the loop cannot be optimized away. bench/experiments.ts holds the same
 * kernel to calibrate iterations per CPU-µs.
 */
export function work(iters: number, seed: number): number {
  let h = seed | 0;
  for (let k = 0; k < iters; k++) h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d) ^ k;
  return h;
}

/** Where fixed work leaves its result. */
let sink = 0;

export function c_start(chain: number, x: DF): void {
  x.setInt(chain * 1_000_000);
}

export function c_step(prev: DF, us: number, iters: number, next: DF): void {
  const v = prev.getInt();
  if (iters > 0) sink ^= work(iters, v);   // a module-level sink keeps the loop alive
  else spin(us);
  next.setInt(v + 1);
}

export function c_check(n: number, len: number, chain: number, last: DF): void {
  const v = last.getInt();
  if (v !== chain * 1_000_000 + len) throw new Error(`starvation: chain ${chain} of ${n} ended at ${v}, expected ${chain * 1_000_000 + len}`);
}
