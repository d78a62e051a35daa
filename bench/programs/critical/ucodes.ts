// Ucodes of bench/programs/critical/critical.fa.
import type { DF } from '../../../src/ucode/df.js';
import { spin } from '../../../examples/kernels.js';

export function c_fill(_i: number, us: number): void {
  spin(us);
}

export function c_first(x: DF): void {
  x.setInt(0);
}

export function c_link(prev: DF, us: number, next: DF): void {
  spin(us);
  next.setInt(prev.getInt() + 1);
}

export function c_last(k: number, x: DF): void {
  if (x.getInt() !== k) throw new Error(`critical: x[${k}] = ${x.getInt()}, expected ${k}`);
}
