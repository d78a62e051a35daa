// Lock contention: rank 0 holds the lock `delay` ms past the instant the last rank (on the other
// node when run on two) asked for it, and the last rank waits for it in its lock call. Choreographed
// by events, not by the clock: the last rank asks only once rank 0 says it holds the lock, and
// rank 0 holds it until `delay` after the instant the last rank says it asked. Balanced: the last
// rank asks once rank 0 says it released the lock.
import { MYTHREAD, THREADS, allAlloc, allLockAlloc, fence, lock, unlock } from 'luna-ts/spmd';
import { idleUntil, injection, siteLateness, startLine, wall, whenSet } from './inject.js';

const HELD = 1, FREED = 2;

export default function main(args: string[]): void {
  const delay = injection(args);
  const l = allLockAlloc(); // its home is rank 0
  const last = THREADS - 1;
  // element 0 (rank 0's): the instant the last rank asked; element `last` (the last rank's): rank 0's word
  const say = allAlloc(THREADS);
  const line = startLine();
  if (MYTHREAD === 0) {
    idleUntil(line);
    lock(l);
    if (delay.balanced) {
      idleUntil(line + delay.ms);
      unlock(l);
      say.put(last, FREED);
      fence();
    } else {
      say.put(last, HELD);
      fence();
      const asked = whenSet(() => say.local[0]!); // its own element: the instant the last rank asked
      idleUntil(asked + delay.ms);
      unlock(l);
    }
  } else if (MYTHREAD === last) {
    whenSet(() => say.local[0]!); // its own element: rank 0 holds the lock (or, balanced, released it)
    say.put(0, wall());
    lock(l); // site
    unlock(l);
  }
  siteLateness();
}
