// The last rank takes and releases a lock whose home is rank 0, then every rank passes a barrier:
// rank 0 must find the lock free (an unlock before a barrier is complete after it), argv[0] times.
import { MYTHREAD, THREADS, allLockAlloc, attempt, barrier, lock, unlock } from 'luna-ts/spmd';

export default function main(args: string[]): void {
  const n = Number(args[0] ?? 50);
  const l = allLockAlloc();
  for (let i = 0; i < n; i++) {
    if (MYTHREAD === THREADS - 1) { lock(l); unlock(l); }
    barrier();
    if (MYTHREAD === 0) {
      if (!attempt(l)) throw new Error(`iteration ${i}: the lock is not free after the barrier that followed its release`);
      unlock(l);
    }
    barrier();
  }
}
