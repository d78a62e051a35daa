// Many-to-many synchronisation at exit: rank 3 is held `delay` ms longer than the others after an
// OUT_MYSYNC exchange completed, so the others leave that much earlier; every rank leaves at a
// common instant after the completion, rank 3 `delay` later.
import { IN_ALLSYNC, MYTHREAD, OUT_MYSYNC, THREADS, allAlloc, exchange, holdNextExit } from 'luna-ts/spmd';
import { exitLine, idleUntil, injection, siteLateness, startLine } from './inject.js';

export default function main(args: string[]): void {
  const delay = injection(args);
  const n = 4;
  const src = allAlloc(THREADS * THREADS * n, { block: THREADS * n }), dst = allAlloc(THREADS * THREADS * n, { block: THREADS * n });
  const line = startLine();
  holdNextExit(delay.on(MYTHREAD === 3), exitLine(line)); // every rank leaves at the same instant, the held one `delay` later
  idleUntil(line);
  exchange(dst, src, n, IN_ALLSYNC | OUT_MYSYNC); // site
  siteLateness();
}
