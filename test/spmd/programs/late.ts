// Rank 1 reaches the barrier 100 ms after the others; then every rank takes a lock in turn.
import { MYTHREAD, allAlloc, allLockAlloc, barrier, fence, lock, region, unlock } from 'luna-ts/spmd';

function busy(ms: number): void {
  const t = performance.now();
  while (performance.now() - t < ms);
}

export default function main(): void {
  const a = allAlloc(8);
  if (MYTHREAD === 1) busy(100);
  barrier();
  const l = allLockAlloc();
  region(() => {
    lock(l);
    a.put(MYTHREAD, 1);
    fence();
    unlock(l);
  });
  barrier();
}
