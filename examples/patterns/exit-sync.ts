// Synchronisation at exit from a collective: rank 1 is held `delay` ms after an OUT_ALLSYNC permute
// completed (as a rank descheduled then is), so the others leave that much earlier than it.
import { MYTHREAD, THREADS, allAlloc, holdNextExit, permute } from 'luna-ts/spmd';
import { idleUntil, injection, startLine } from './inject.js';

export default function main(args: string[]): void {
  const delay = injection(args);
  const src = allAlloc(THREADS * 16, { block: 16 }), dst = allAlloc(THREADS * 16, { block: 16 });
  const perm = allAlloc(THREADS, { type: 'i32' });
  perm.local[0] = (MYTHREAD + 1) % THREADS;
  const line = startLine();
  holdNextExit(delay.on(MYTHREAD === 1));
  idleUntil(line);
  permute(dst, src, perm, 16); // site
}
