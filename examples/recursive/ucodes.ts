// Atomic code fragments of examples/recursive/recursive.fa.
import type { DF } from '../../src/ucode/df.js';

export function c_init(v: number, x: DF): void {
  x.setInt(v);
}

export function c_add(a: DF, b: DF, s: DF): void {
  s.setInt(a.getInt() + b.getInt());
}

export function c_leaf_sum(lo: number, hi: number, s: DF): void {
  let t = 0;
  for (let i = lo; i <= hi; i++) t += i * i;
  s.setInt(t);
}

export function c_check(n: number, m: number, fib: DF, sum: DF): void {
  let [x, y] = [0, 1];
  for (let i = 0; i < n; i++) [x, y] = [y, x + y];
  const wantSum = (m * (m + 1) * (2 * m + 1)) / 6;
  const gotFib = fib.getInt();
  const gotSum = sum.getInt();
  console.log(`fib(${n}) = ${gotFib}`);
  console.log(`sum_sq(1..${m}) = ${gotSum}`);
  if (gotFib !== x || gotSum !== wantSum) {
    console.log(`recursive: FAILED (expected fib(${n}) = ${x}, sum_sq(1..${m}) = ${wantSum})`);
    throw new Error('recursive: result mismatch');
  }
  console.log(`recursive: OK (fib(${n})=${x}, sum_sq(1..${m})=${wantSum})`);
}
