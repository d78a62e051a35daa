// Kernels shared by the examples' ucodes and the benchmarks (one copy of each; the benchmarks'
// baselines call them directly, so a baseline and a LuNA run execute the same code).

/** Busy-spin `us` microseconds on the wall clock (performance.now()), never sleep; 0 returns at once. */
export function spin(us: number): void {
  if (us <= 0) return;
  const end = performance.now() + us / 1000;
  while (performance.now() < end);
}

/**
 * Fixed work: `iters` rounds of an integer hash (no memory traffic). Returns a value the caller
 * keeps (e.g. in a module-level sink), so the loop cannot be optimized away.
 */
export function work(iters: number, seed: number): number {
  let h = seed | 0;
  for (let k = 0; k < iters; k++) h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d) ^ k;
  return h;
}
