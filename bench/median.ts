// The median, on its own so the raw baselines (bare processes and threads) need nothing else of
// the harness.
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/**
 * µs per one-way crossing of a round-trip probe: a warm-up of 200 round trips (JIT, buffers),
 * then `crossings` crossings in 10 blocks, the median block.
 */
export async function usPerCrossing(roundTrips: (n: number) => Promise<void>, crossings: number): Promise<number> {
  await roundTrips(200);
  const blocks = 10, per = Math.max(1, Math.round(crossings / 2 / blocks));
  const us: number[] = [];
  for (let b = 0; b < blocks; b++) {
    const t0 = process.hrtime.bigint();
    await roundTrips(per);
    us.push(Number(process.hrtime.bigint() - t0) / 1e3 / (2 * per));
  }
  return median(us);
}
