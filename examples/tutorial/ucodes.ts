// Atomic code fragments (ucodes) of examples/tutorial/pi.fa.
import type { DF } from 'luna-ts/ucode';

/** Midpoint-rule sum of 4/(1+x²)·h over block b of the n points. */
export function c_partial(n: number, blocks: number, b: number, sum: DF): void {
  const h = 1 / n;
  const first = Math.floor((b * n) / blocks);
  const last = Math.floor(((b + 1) * n) / blocks);
  let s = 0;
  for (let i = first; i < last; i++) {
    const x = (i + 0.5) * h;
    s += 4 / (1 + x * x);
  }
  sum.setReal(s * h);
}

export function c_add(a: DF, b: DF, sum: DF): void {
  sum.setReal(a.getReal() + b.getReal());
}

export function c_zero(x: DF): void {
  x.setReal(0);
}

export function c_report(n: number, blocks: number, pi: DF): void {
  const value = pi.getReal();
  // The midpoint rule's error for this integrand is below 1/(3n²); 1e-9 covers rounding.
  const tolerance = 1 / (3 * n * n) + 1e-9;
  const error = Math.abs(value - Math.PI);
  const pieces = `${blocks} block${blocks === 1 ? '' : 's'}`;
  console.log(`pi ≈ ${value.toFixed(10)} from ${n} points in ${pieces}`);
  let failure = '';
  if (blocks < 1 || n < blocks) failure = `1 <= blocks <= n is needed, got n=${n}, blocks=${blocks}`;
  else if (!(error <= tolerance)) failure = `error ${error.toExponential(2)} > ${tolerance.toExponential(2)}`;
  if (failure) {
    console.log(`tutorial: FAILED (${failure})`);
    throw new Error('tutorial: result mismatch');
  }
  console.log(`tutorial: OK (n=${n}, ${pieces})`);
}
