// Rank 1 waits at a barrier while the others lock and unlock a lock of its node, put into and get
// from its part: none of that may wake it (the test counts its sleeps). argv[0]: operations each.
import { MYTHREAD, THREADS, allAlloc, allLockAlloc, barrier, lock, unlock } from 'luna-ts/spmd';

export default function main(args: string[]): void {
  const k = Number(args[0]);
  const a = allAlloc(THREADS * k, { block: k, type: 'f64' });
  const l = allLockAlloc(); // home: rank 0, on rank 1's node
  barrier();
  if (MYTHREAD !== 1) {
    for (let i = 0; i < k; i++) {
      lock(l);
      unlock(l);
      if (MYTHREAD === 2) a.put(k + i, i + 0.5);
      if (MYTHREAD === 3 && a.get(k + i) === -1) throw new Error('never');
    }
  }
  barrier();
  if (MYTHREAD === 1) for (let j = 0; j < k; j++) if (a.local[j] !== j + 0.5) throw new Error(`rank 1: element ${j}: got ${a.local[j]}, want ${j + 0.5}`);
  barrier();
}
