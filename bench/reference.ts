// Figures of the original C++/MPI LuNA and of peer systems, measured on this machine model with
// the same LuNA programs (medians of interleaved runs; see docs/benchmarks.md). The benchmarks
// print their ratio to these.

export const ORIGINAL = {
  /** µs per fragment over the program's span, chain with req_count 1 */
  chain20kT1: 2.60,
  chain200kT1: 2.39,
  chain200kT2: 4.15,
  /** 8 independent chains, 2 threads */
  chains8x2000T2: 3.35,
  chains8x20000T2: 4.23,
  /** µs per step, every step crossing 2 processes */
  pingpongStep: 54.5,
  /** stencil_1d width 2, empty kernel, µs per task */
  stencil2000T1: 5.1,
  stencil2000T2: 8.6,
  stencil20000T1: 6.1,
  stencil20000T2: 8.5,
  /** peak memory of the 200 000-link chain on 1 thread, MB; of an empty program, MB */
  chain200kMB: 150,
  emptyMB: 14,
  /** block matmul 1600² in 10×10 blocks of 160 with C++ ucodes, s; a sequential C++ -O3 loop, s */
  matmul1600T1s: 1.15,
  matmul1600T2s: 1.0,
  matmulSequentialCppS: 0.70,
} as const;

/** Task Bench METG(50 %) of stencil_1d, width 2, measured here with the official implementations, µs. */
export const TASKBENCH_PEERS: Record<string, number> = {
  'MPI (shared memory)': 0.74,
  'MPI+OpenMP': 2.5,
  'MPI (TCP)': 10.4,
  'OpenMP tasks (LLVM)': 12.1,
  'OpenMP tasks (GCC)': 43,
  StarPU: 46,
  Dask: 1500,
};

/**
 * The original LuNA's column of the side-by-side pass kept in docs/benchmarks.md ("The original
 * LuNA and its peers": rebuilt from its public snapshot here, C++ ucodes compiled alike on both systems,
 * in-program spans, alternated, the quietest pass), keyed by bench/original.ts's figures. That
 * suite divides by these when LUNA_ORIGINAL does not name a build to run beside luna-ts.
 */
export const ORIGINAL_SIDE_BY_SIDE: Record<string, number> = {
  'startup.wallS': 0.379,
  'empty.peakMB': 14.5,
  'chain200k.t1.usPerCf': 3.33,
  'chain200k.t2.usPerCf': 5.95,
  'chain200k.t1.peakMB': 150,
  'chain200k.t2.peakMB': 225,
  'chain20k.t1.usPerCf': 3.89,
  'chains8x20k.t2.usPerCf': 6.72,
  'chains8x2k.t2.usPerCf': 5.42,
  'matmul.t1.s': 2.25,
  'matmul.t2.s': 2.85,
  'stencil2k.t1.usPerTask': 12.1,
  'stencil2k.t2.usPerTask': 17.1,
  /** on a quiet machine */
  'pingpong.usPerStep': 84.5,
  /**
   * with both systems' kernels compiled alike (-O3 -falign-loops=64, bench/original/runner.ts
   * CXXFLAGS), the quiet pass (median of 3 sweeps, load 0.0 → 1.6; eight loaded runs read 147–719,
   * median 372); the 49.8 µs kept before came from a build whose kernel loop happened to run 1.75×
   * faster than luna-ts's and the bare peak's
   */
  'metg.1x2.stencil_1d.us': 246,
  /** the middle of the 992–1 138 µs measured */
  'metg.2x1.stencil_1d.us': 1065,
};
