// Atomic code fragments of examples/chain/chain.fa.
import type { DF } from '../../src/ucode/df.js';
import { spin } from '../kernels.js';

export function c_start(x: DF): void {
  x.setInt(0);
}

export function c_step(prev: DF, us: number, next: DF): void {
  spin(us);
  next.setInt(prev.getInt() + 1);
}

export function c_check(n: number, last: DF): void {
  const v = last.getInt();
  if (v !== n) {
    console.log(`chain: FAILED (x[${n}] = ${v}, expected ${n})`);
    throw new Error('chain: result mismatch');
  }
  console.log(`chain: OK (n=${n})`);
}
