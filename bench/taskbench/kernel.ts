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

/**
 * Optimise computeBound before anything is timed, as the C++ kernel is compiled before the span:
 * ~300 short calls (10–20 ms here) get it optimised as a whole. Called by a Task Bench program's
 * ucode module as it loads (a worker loads it before a `--warm-start` span) and by the bare
 * floor's threads before theirs (bench/raw-lockstep.ts), so both are timed with the same code.
 * Without it a lane's first call is long and V8 replaces it on the stack (OSR) inside the rounds'
 * loop, before the final sum's loop has run: that code deoptimises at the sum ('insufficient type
 * feedback for compare operation', 10–39 times a run), and calls run ~2–3× slower until the
 * function is optimised as a whole, tens to hundreds of calls later — 1–8 ms a lane on the first
 * task, ~12 ms of CPU over a run's first 300 tasks at 2^11 iterations (docs/benchmarks.md, "The
 * TypeScript kernel at METG sizes: where a lane's span goes, and its tier-up").
 */
export function warmKernel(): void {
  let s = 0;
  for (let i = 0; i < 300; i++) s += computeBound(8);
  if (!Number.isFinite(s)) throw new Error('kernel');
}
