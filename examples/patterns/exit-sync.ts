// Synchronisation at exit from a collective: rank 1 is held `delay` ms longer than the others after
// an OUT_ALLSYNC permute completed (as a rank descheduled then is), so the others leave that much
// earlier than it; every rank leaves at a common instant after the completion, rank 1 `delay` later.
import { MYTHREAD, THREADS, allAlloc, holdNextExit, permute } from 'luna-ts/spmd';
import { exitLine, idleUntil, injection, siteLateness, startLine } from './inject.js';

export default function main(args: string[]): void {
  const delay = injection(args);
  const src = allAlloc(THREADS * 16, { block: 16 }), dst = allAlloc(THREADS * 16, { block: 16 });
  const perm = allAlloc(THREADS, { type: 'i32' });
  perm.local[0] = (MYTHREAD + 1) % THREADS;
  const line = startLine();
  holdNextExit(delay.on(MYTHREAD === 1), exitLine(line)); // every rank leaves at the same instant, the held one `delay` later
  idleUntil(line);
  permute(dst, src, perm, 16); // site
  siteLateness();
}
