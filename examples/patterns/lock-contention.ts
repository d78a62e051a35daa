// Lock contention: rank 0 holds the lock `delay` ms longer than the last rank needs to reach it;
// the last rank (on the other node when run on two) waits for it in its lock call. Balanced: the
// last rank comes once the lock is free again.
import { MYTHREAD, THREADS, allLockAlloc, lock, unlock } from 'luna-ts/spmd';
import { idleUntil, injection, startLine } from './inject.js';

export default function main(args: string[]): void {
  const delay = injection(args);
  const l = allLockAlloc(); // its home is rank 0
  const line = startLine();
  if (MYTHREAD === 0) {
    idleUntil(line);
    lock(l);
    idleUntil(line + 20 + delay.ms);
    unlock(l);
  } else if (MYTHREAD === THREADS - 1) {
    idleUntil(line + 20 + (delay.balanced ? delay.ms + 20 : 0)); // balanced: after the release
    lock(l); // site
    unlock(l);
  }
}
