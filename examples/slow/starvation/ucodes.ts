// Atomic code fragments of examples/slow/starvation/starvation.fa.
import type { DF } from '../../../src/ucode/df.js';
import { spin, work } from '../../kernels.js';

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
