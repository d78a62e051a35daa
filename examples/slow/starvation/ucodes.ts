// Atomic code fragments of examples/slow/starvation/starvation.fa.
import type { DF } from '../../../src/ucode/df.js';

/** Busy-spin `us` microseconds on the wall clock (performance.now()), never sleep. */
export function spin(us: number): void {
  if (us <= 0) return;
  const end = performance.now() + us / 1000;
  while (performance.now() < end);
}

export function c_start(chain: number, x: DF): void {
  x.setInt(chain * 1_000_000);
}

export function c_step(prev: DF, us: number, next: DF): void {
  spin(us);
  next.setInt(prev.getInt() + 1);
}

export function c_check(n: number, len: number, chain: number, last: DF): void {
  const v = last.getInt();
  if (v !== chain * 1_000_000 + len) throw new Error(`starvation: chain ${chain} of ${n} ended at ${v}, expected ${chain * 1_000_000 + len}`);
}
