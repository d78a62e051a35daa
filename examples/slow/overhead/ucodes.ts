// Atomic code fragments of examples/slow/overhead/overhead.fa.
import type { DF } from '../../../src/ucode/df.js';
import { spin } from '../../kernels.js';

export function c_start(x: DF): void {
  x.setInt(0);
}

export function c_step(prev: DF, us: number, next: DF): void {
  spin(us);
  next.setInt(prev.getInt() + 1);
}

export function c_check(len: number, last: DF): void {
  const v = last.getInt();
  if (v !== len) throw new Error(`overhead: chain ended at ${v}, expected ${len}`);
}
