// Task Bench's compute_bound kernel: `iters` rounds of a multiply-add over a 64-element array of
// doubles (2 FLOP per element per round: 128 FLOP per iteration), as the reference does.

export const FLOP_PER_ITERATION = 128;

const A = new Float64Array(64);

export function computeBound(iters: number): number {
  const a = A;
  for (let j = 0; j < 64; j++) a[j] = 1.0 + j * 1e-3;
  for (let i = 0; i < iters; i++) {
    for (let j = 0; j < 64; j++) a[j] = a[j]! * 0.9999 + 1e-6;
  }
  let s = 0;
  for (let j = 0; j < 64; j++) s += a[j]!;
  return s;
}
