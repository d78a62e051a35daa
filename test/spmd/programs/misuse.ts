// One misuse, chosen by the first argument, on rank 1.
import { MYTHREAD, THREADS, allAlloc, allLockAlloc, unlock, barrier, broadcast, gather } from 'luna-ts/spmd';

export default function main(args: string[]): void {
  const a = allAlloc(4 * THREADS);
  const l = allLockAlloc();
  barrier();
  if (args[0] === 'index' && MYTHREAD === 1) a.get(4 * THREADS + 5);
  if (args[0] === 'rank' && MYTHREAD === 1) a.getFrom(new Float64Array(1), THREADS);
  if (args[0] === 'unlock' && MYTHREAD === 1) unlock(l);
  if (args[0] === 'collective') {
    if (MYTHREAD === 1) gather(a, a, 1);
    else broadcast(a, a, 1);
  }
  if (args[0] === 'alloc') allAlloc(MYTHREAD === 1 ? 8 : 16);
  barrier();
}
