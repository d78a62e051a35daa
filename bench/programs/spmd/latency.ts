// The SPMD layer's costs measured by rank 0: barrier, 8-byte get/put of another rank's element,
// 1 MiB memget/memput of another rank's part; on one node also the same through raw shared
// memory (an Atomics barrier, typed-array reads and copies of the same buffer) as the baseline.
//   luna spmd --threads T [--nodes N] latency.ts OUT.json ITERATIONS local|remote
import { writeFileSync } from 'node:fs';
import { MYTHREAD, THREADS, allAlloc, barrier, waitStats } from 'luna-ts/spmd';

const MiB = 1 << 20;

function rawBarrier(v: Int32Array, threads: number): void {
  const gen = Atomics.load(v, 1);
  if (Atomics.add(v, 0, 1) === threads - 1) {
    Atomics.store(v, 0, 0);
    Atomics.add(v, 1, 1);
    Atomics.notify(v, 1);
    return;
  }
  const until = performance.now() + 0.02;
  while (Atomics.load(v, 1) === gen) if (performance.now() > until) Atomics.wait(v, 1, gen, 1);
}

export default function main(args: string[]): void {
  const [out, itersArg, where] = args;
  const N = Number(itersArg ?? 2000);
  const local = where !== 'remote';
  const other = THREADS - 1;
  const r: Record<string, number> = {};
  const time = (n: number, f: () => void): number => { const t0 = performance.now(); f(); return ((performance.now() - t0) * 1000) / n; };

  for (let i = 0; i < 50; i++) barrier();
  const s0 = waitStats();
  r.barrierUs = time(N, () => { for (let i = 0; i < N; i++) barrier(); });
  // the state a barrier loop runs in: ~0 when the ranks spin through, ~1 when they take turns sleeping
  const s1 = waitStats();
  r.barrierSleepsPerOp = (s1.sleeps - s0.sleeps) / N;
  r.barrierParksPerOp = (s1.parks - s0.parks) / N;
  const sync = allAlloc(2 * THREADS, { type: 'i32', block: 2 });
  if (local) {
    for (let i = 0; i < 50; i++) rawBarrier(sync.view as Int32Array, THREADS);
    r.rawBarrierUs = time(N, () => { for (let i = 0; i < N; i++) rawBarrier(sync.view as Int32Array, THREADS); });
  }
  barrier();

  // 8 bytes: an element of the last rank, read and written by rank 0
  const a = allAlloc(THREADS, { type: 'f64' });
  const big = allAlloc(THREADS * (MiB / 8), { type: 'f64', block: MiB / 8 });
  barrier();
  if (MYTHREAD === 0) {
    const n = local ? N * 50 : N;
    let s = 0;
    for (let i = 0; i < 100; i++) s += a.get(other);
    const g0 = waitStats().sleeps;
    r.getUs = time(n, () => { for (let i = 0; i < n; i++) s += a.get(other); });
    r.getSleepsPerOp = (waitStats().sleeps - g0) / n;
    r.putUs = time(n, () => { for (let i = 0; i < n; i++) a.put(other, i); });
    const buf = new Float64Array(MiB / 8);
    const reps = local ? 200 : 20;
    big.memget(buf, other * (MiB / 8));
    r.memgetGBps = MiB / 1e3 / time(reps, () => { for (let i = 0; i < reps; i++) big.memget(buf, other * (MiB / 8)); });
    r.memputGBps = MiB / 1e3 / time(reps, () => { for (let i = 0; i < reps; i++) big.memput(other * (MiB / 8), buf); });
    if (local) {
      // the same memory without the layer: where the last rank's element lies in this node's view
      const v = a.view as Float64Array, at = other * a.layout.perRank;
      r.rawGetUs = time(n, () => { for (let i = 0; i < n; i++) s += v[at]!; });
      const bv = big.view as Float64Array, bat = other * big.layout.perRank;
      r.rawCopyGBps = MiB / 1e3 / time(reps, () => { for (let i = 0; i < reps; i++) buf.set(bv.subarray(bat, bat + MiB / 8)); });
    }
    if (s === 42.5) r.never = 1; // keep the reads
    writeFileSync(out!, JSON.stringify(r));
  }
  barrier();
}
