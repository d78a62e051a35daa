const RANK = process.env.LUNA_RANK ?? process.env.OMPI_COMM_WORLD_RANK ?? process.env.PMIX_RANK ?? '0';

export function c_busy(i: number, ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) { /* busy */ }
  console.log(`s ${i} @${RANK}`);
}
