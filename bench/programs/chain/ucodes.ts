// Ucodes of bench/programs/chain/chain.fa (also called directly by the sequential-loop and
// piscina baselines of bench/runtime.ts).
import type { DF } from '../../../src/ucode/df.js';
import { spin } from '../../../examples/kernels.js';

export function c_start(x: DF): void {
  x.setInt(0);
}

export function c_step(prev: DF, us: number, next: DF): void {
  spin(us);
  next.setInt(prev.getInt() + 1);
}

export function c_check(n: number, last: DF): void {
  const v = last.getInt();
  if (v !== n) throw new Error(`bench chain: x[${n}] = ${v}, expected ${n}`);
}
