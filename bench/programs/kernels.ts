// Kernels shared by the benchmark programs and the examples (and called directly by the
// benchmarks' baselines): one copy of each, imported by every ucode module that needs it.

/** Busy-wait for `us` microseconds (0: return at once). */
export function spin(us: number): void {
  if (us <= 0) return;
  const end = performance.now() + us / 1000;
  while (performance.now() < end);
}
