// Atomic code fragments of examples/independent/independent.fa and independent_checked.fa.
import type { DF } from '../../src/ucode/df.js';
import { spin } from '../kernels.js';

export function c_work(_i: number, us: number): void {
  spin(us);
}

export function c_job(_i: number, us: number, done: DF): void {
  spin(us);
  done.setInt(1);
}

export function c_share(x: DF, y: DF): void {
  y.copy(x);
}

export function c_add(a: DF, b: DF, s: DF): void {
  s.setInt(a.getInt() + b.getInt());
}

export function c_check(n: number, count: DF): void {
  const k = count.getInt();
  if (k !== n) {
    console.log(`independent: FAILED (${k} of ${n} CFs reported)`);
    throw new Error('independent: result mismatch');
  }
  console.log(`independent: OK (n=${n})`);
}
