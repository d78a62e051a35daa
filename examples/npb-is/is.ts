// NPB IS, the NAS Parallel Benchmarks' integer sort, on the SPMD layer (docs/spmd.md), written
// from the benchmark's specification (NAS report RNR-94-007 and NPB 3.4's behaviour): the keys
// come from NPB's linear congruential generator (randlc, a = 5^13, seed 314159265, x ← a·x mod
// 2^46), each rank generates its own stretch of the one sequence; every iteration counts its keys
// into buckets, sums the bucket counts over all ranks, hands each rank a run of buckets holding
// about TOTAL_KEYS / THREADS keys, exchanges the keys and ranks them by counting. Partial
// verification checks five keys' ranks every iteration against the benchmark's values, full
// verification sorts the keys at the end and checks the order across ranks.
//
// The structure is the UPC IS of the GWU suite that seed 001 analysed: the bucket-count sum
// allocates its shared scratch with allAlloc at every call (upc_all_alloc inside the reduction),
// and barriers fence the key exchange. The `fixed` variant applies what the pattern analysis
// suggests: the shared arrays are allocated once, outside the iteration loop, and the barriers
// go — the synchronising collectives already order the phases, and the key buffer alternates
// between two shared arrays, so no rank overwrites keys another rank is still reading. The
// `nosync` variant goes one step further, as the analysis of the fixed one suggests: the bucket
// counts alternate between two arrays too, and the collectives leave without waiting for the
// others (OUT_NOSYNC) — a rank that writes an array again has entered the next gatherAll, which
// no rank enters before it has finished reading that array.
//
//   luna spmd --threads 4 examples/npb-is/is.ts W            # the original structure
//   luna spmd --threads 4 examples/npb-is/is.ts W fixed      # allocation hoisted, barriers removed
//   luna spmd --threads 4 examples/npb-is/is.ts W nosync     # and no synchronisation at the collectives' exit
import { ALLSYNC, IN_ALLSYNC, MYTHREAD, OUT_NOSYNC, THREADS, allAlloc, barrier, exchange, gatherAll, reduce, type SharedArray } from 'luna-ts/spmd';

/** The official problem classes: log2 of the key count, of the key range and of the bucket count,
 * the indices of the five partial-verification keys and their ranks, and how the expected rank
 * of test key i moves with the iteration (the keys altered every iteration shift it). */
interface IsClass {
  totalKeysLog2: number; maxKeyLog2: number; bucketsLog2: number;
  testIndex: number[]; testRank: number[];
  rankShift: (i: number, iteration: number) => number;
}

const CLASSES: Record<string, IsClass> = {
  S: { totalKeysLog2: 16, maxKeyLog2: 11, bucketsLog2: 9,
    testIndex: [48427, 17148, 23627, 62548, 4431], testRank: [0, 18, 346, 64917, 65463],
    rankShift: (i, it) => (i <= 2 ? it : -it) },
  W: { totalKeysLog2: 20, maxKeyLog2: 16, bucketsLog2: 10,
    testIndex: [357773, 934767, 875723, 898999, 404505], testRank: [1249, 11698, 1039987, 1043896, 1048018],
    rankShift: (i, it) => (i < 2 ? it - 2 : -it) },
  A: { totalKeysLog2: 23, maxKeyLog2: 19, bucketsLog2: 10,
    testIndex: [2112377, 662041, 5336171, 3642833, 4250760], testRank: [104, 17523, 123928, 8288932, 8388264],
    rankShift: (i, it) => (i <= 2 ? it - 1 : -(it - 1)) },
};

const MAX_ITERATIONS = 10;
const TEST_ARRAY_SIZE = 5;
const SEED = 314159265;
const MULT = 1220703125; // 5^13

// ------------------------------------------------------------------ NPB's random numbers

const R23 = 2 ** -23, R46 = 2 ** -46, T23 = 2 ** 23, T46 = 2 ** 46;

/** One step of randlc: a·x mod 2^46, computed exactly in doubles by splitting both factors at 2^23. */
function lcg(x: number, a: number): number {
  const a1 = Math.trunc(R23 * a), a2 = a - T23 * a1;
  const x1 = Math.trunc(R23 * x), x2 = x - T23 * x1;
  const t1 = a1 * x2 + a2 * x1;
  const z = t1 - T23 * Math.trunc(R23 * t1);
  const t3 = T23 * z + a2 * x2;
  return t3 - T46 * Math.trunc(R46 * t3);
}

/** The generator's state after skipping the numbers of the ranks before `rank` (each uses 4 per key). */
function seedOf(rank: number, ranks: number, numbers: number): number {
  if (rank === 0) return SEED;
  const perRank = Math.floor((numbers / 4 + ranks - 1) / ranks);
  let skip = perRank * 4 * rank, x = SEED, a = MULT;
  // x ← a^skip · x by binary powering of the multiplier
  while (skip > 1) {
    const half = Math.floor(skip / 2);
    if (2 * half === skip) { a = lcg(a, a); skip = half; } else { x = lcg(x, a); skip -= 1; }
  }
  return lcg(x, a);
}

/** This rank's keys: each is MAX_KEY/4 times the sum of four uniform numbers of (0, 1). */
function createKeys(keys: Int32Array, seed: number, maxKey: number): void {
  const k = maxKey / 4;
  let x = seed;
  for (let i = 0; i < keys.length; i++) {
    let sum = 0;
    x = lcg(x, MULT); sum += R46 * x;
    x = lcg(x, MULT); sum += R46 * x;
    x = lcg(x, MULT); sum += R46 * x;
    x = lcg(x, MULT); sum += R46 * x;
    keys[i] = Math.trunc(k * sum);
  }
}

// ------------------------------------------------------------------ the benchmark

export default function main(args: string[]): void {
  const className = (args[0] ?? 'S').toUpperCase();
  const variant = args[1] ?? 'original';
  const c = CLASSES[className];
  if (!c) throw new Error(`npb-is: unknown class '${args[0]}' (one of ${Object.keys(CLASSES).join(', ')})`);
  if (variant !== 'original' && variant !== 'fixed' && variant !== 'nosync') throw new Error(`npb-is: unknown variant '${variant}' (original, fixed or nosync)`);
  const fixed = variant !== 'original', nosync = variant === 'nosync';
  const sync = nosync ? IN_ALLSYNC | OUT_NOSYNC : ALLSYNC;
  const TOTAL_KEYS = 2 ** c.totalKeysLog2, MAX_KEY = 2 ** c.maxKeyLog2, NB = 2 ** c.bucketsLog2;
  if ((THREADS & (THREADS - 1)) !== 0 || THREADS > NB) throw new Error(`npb-is: ${THREADS} ranks: IS runs on a power of two ranks, at most ${NB}`);
  const shift = c.maxKeyLog2 - c.bucketsLog2;
  const NBT = NB + TEST_ARRAY_SIZE; // bucket counts, then the test keys hidden after them
  const numKeys = TOTAL_KEYS / THREADS;
  const me = MYTHREAD;

  const keyArray = new Int32Array(numKeys);
  createKeys(keyArray, seedOf(me, THREADS, 4 * TOTAL_KEYS), MAX_KEY);

  // shared: each rank's part of keys is its keys sorted into buckets (read by the ranks they go to);
  // counts and sums carry the bucket counts; info the (count, displacement) of the keys per rank
  const keyBufs: SharedArray[] = [allAlloc(THREADS * numKeys, { block: numKeys, type: 'i32' })];
  if (fixed) keyBufs.push(allAlloc(THREADS * numKeys, { block: numKeys, type: 'i32' }));
  const countsOnce = fixed ? [allAlloc(THREADS * NBT, { block: NBT, type: 'i32' })] : undefined;
  if (nosync) countsOnce!.push(allAlloc(THREADS * NBT, { block: NBT, type: 'i32' }));
  const sumsOnce = fixed ? allAlloc(THREADS * THREADS * NBT, { block: THREADS * NBT, type: 'i32' }) : undefined;
  const sendInfo = allAlloc(THREADS * 2 * THREADS, { block: 2 * THREADS, type: 'i32' });
  const recvInfo = allAlloc(THREADS * 2 * THREADS, { block: 2 * THREADS, type: 'i32' });

  const totals = new Int32Array(NBT);
  const bucketPtrs = new Int32Array(NB);
  const first = new Int32Array(THREADS), last = new Int32Array(THREADS);
  const population = new Int32Array(MAX_KEY);
  let received = new Int32Array(numKeys);
  let passed = 0;
  let localKeys = 0, minKey = 0;

  // buffers alternate by call, not by iteration: the untimed first call and the first timed one
  // both have iteration 1
  let calls = 0;

  function rank(iteration: number): void {
    const step = calls++;
    if (me === 0) {
      keyArray[iteration] = iteration;
      keyArray[iteration + MAX_ITERATIONS] = MAX_KEY - iteration;
    }
    // the original allocates the reduction's shared scratch at every call, as upc_all_alloc in the UPC code
    const counts = countsOnce?.[step % countsOnce.length] ?? allAlloc(THREADS * NBT, { block: NBT, type: 'i32' });
    const size = counts.local as Int32Array;
    size.fill(0);
    for (let i = 0; i < TEST_ARRAY_SIZE; i++) {
      if (Math.floor(c.testIndex[i]! / numKeys) === me) size[NB + i] = keyArray[c.testIndex[i]! % numKeys]!;
    }
    for (let i = 0; i < numKeys; i++) size[keyArray[i]! >> shift]!++;
    bucketPtrs[0] = 0;
    for (let i = 1; i < NB; i++) bucketPtrs[i] = bucketPtrs[i - 1]! + size[i - 1]!;
    const keys = keyBufs[step % keyBufs.length]!;
    const bucketed = keys.local as Int32Array;
    for (let i = 0; i < numKeys; i++) {
      const key = keyArray[i]!;
      bucketed[bucketPtrs[key >> shift]!++] = key;
    }

    // the bucket counts of the whole problem: every rank gathers every rank's counts and adds them
    const sums = sumsOnce ?? allAlloc(THREADS * THREADS * NBT, { block: THREADS * NBT, type: 'i32' });
    if (!fixed) barrier();
    gatherAll(sums, counts, NBT, sync);
    const all = sums.local as Int32Array;
    totals.set(all.subarray(0, NBT));
    for (let t = 1; t < THREADS; t++) for (let i = 0, o = t * NBT; i < NBT; i++) totals[i]! += all[o + i]!;

    // rank j takes the run of buckets that brings the running total past (j + 1) · numKeys
    const info = sendInfo.local as Int32Array;
    info.fill(0);
    first.fill(0); last.fill(0);
    let acc = 0, mine = 0, j = 0;
    for (let i = 0; i < NB; i++) {
      acc += totals[i]!;
      mine += size[i]!;
      if (acc >= (j + 1) * numKeys) {
        info[2 * j] = mine;
        if (j !== 0) {
          info[2 * j + 1] = info[2 * j - 1]! + info[2 * j - 2]!;
          first[j] = last[j - 1]! + 1;
        }
        last[j++] = i;
        mine = 0;
      }
    }
    for (; j < THREADS; j++) { info[2 * j] = 0; first[j] = 1; }

    // every rank learns how many keys each rank holds for it and where, then pulls them
    if (!fixed) barrier();
    exchange(recvInfo, sendInfo, 2, sync);
    let lesser = 0, total = 0;
    for (let t = 0; t < me; t++) for (let i = first[t]!; i <= last[t]!; i++) lesser += totals[i]!;
    for (let i = first[me]!; i <= last[me]!; i++) total += totals[i]!;
    if (received.length < total) received = new Int32Array(total);
    const from = recvInfo.local as Int32Array;
    for (let t = 0, at = 0; t < THREADS; t++) {
      const n = from[2 * t]!;
      if (n > 0) keys.getFrom(received.subarray(at, at + n), t, from[2 * t + 1]!);
      at += n;
    }
    if (!fixed) barrier();

    // rank by counting: population[key - lo] ends as the number of local keys ≤ key
    const lo = first[me]! << shift, hi = ((last[me]! + 1) << shift) - 1;
    population.fill(0, 0, Math.max(0, hi - lo + 1));
    for (let i = 0; i < total; i++) population[received[i]! - lo]!++;
    for (let i = 0; i < hi - lo; i++) population[i + 1]! += population[i]!;

    // partial verification: the ranks of the five test keys
    for (let i = 0; i < TEST_ARRAY_SIZE; i++) {
      const k = totals[NB + i]!;
      if (lo <= k && k <= hi) {
        const keyRank = (k - 1 >= lo ? population[k - 1 - lo]! : 0) + lesser;
        const expected = c.testRank[i]! + c.rankShift(i, iteration);
        if (keyRank === expected) passed++;
        else console.log(`Failed partial verification: iteration ${iteration}, rank ${me}, test key ${i}: rank ${keyRank}, expected ${expected}`);
      }
    }
    localKeys = total;
    minKey = lo;
  }

  // one iteration untimed, as the benchmark does, then the timed ones
  rank(1);
  passed = 0;
  const t0 = performance.now();
  for (let it = 1; it <= MAX_ITERATIONS; it++) rank(it);
  const seconds = (performance.now() - t0) / 1000;

  // full verification: sort by the ranks, check the order here and against the previous rank's last key
  const sorted = new Int32Array(localKeys);
  for (let i = 0; i < localKeys; i++) {
    const key = received[i]!;
    sorted[--population[key - minKey]!] = key;
  }
  const lastKeys = allAlloc(THREADS, { type: 'i32' });
  (lastKeys.local as Int32Array)[0] = localKeys > 0 ? sorted[localKeys - 1]! : 0;
  barrier();
  let unsorted = 0;
  if (me > 0 && localKeys > 0 && lastKeys.get(me - 1) > sorted[0]!) unsorted++;
  for (let i = 1; i < localKeys; i++) if (sorted[i - 1]! > sorted[i]!) unsorted++;
  if (unsorted !== 0) console.log(`Rank ${me}: full verification: ${unsorted} key(s) out of order`);
  else passed++;

  // the run's result on rank 0: verifications passed over all ranks, and the slowest rank's time
  const result = allAlloc(2, { block: 2 });
  const counted = allAlloc(THREADS, { type: 'i32' });
  const times = allAlloc(THREADS);
  counted.local[0] = passed;
  times.local[0] = seconds;
  reduce(result, 0, counted, 0, THREADS, 'sum');
  reduce(result, 1, times, 0, THREADS, 'max');
  if (me !== 0) return;
  const verified = result.get(0), time = result.get(1);
  const ok = verified === TEST_ARRAY_SIZE * MAX_ITERATIONS + THREADS;
  console.log(` NAS Parallel Benchmarks (luna-ts SPMD) -- IS Benchmark`);
  console.log(` Class ${className}, ${TOTAL_KEYS} keys, ${MAX_ITERATIONS} iterations, ${THREADS} rank(s), ${variant}`);
  console.log(` Time in seconds = ${time.toFixed(4)}`);
  console.log(` Mop/s total     = ${(MAX_ITERATIONS * TOTAL_KEYS / time / 1e6).toFixed(2)}`);
  console.log(` Verification    = ${ok ? 'SUCCESSFUL' : 'UNSUCCESSFUL'} (${verified} of ${TEST_ARRAY_SIZE * MAX_ITERATIONS + THREADS} checks)`);
  const line = `npb-is: ${ok ? 'OK' : 'FAILED'} (class ${className}, ${THREADS} ranks, ${variant}, ${time.toFixed(4)} s)`;
  console.log(line);
  if (!ok) throw new Error(line);
}
