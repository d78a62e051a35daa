// Many-to-many synchronisation at entry: rank 2 enters an IN_MYSYNC gather_all `delay` ms late; every
// other rank waits for its part.
import { IN_MYSYNC, MYTHREAD, OUT_NOSYNC, THREADS, allAlloc, gatherAll } from 'luna-ts/spmd';
import { idleUntil, injection, siteLateness, startLine } from './inject.js';

export default function main(args: string[]): void {
  const delay = injection(args);
  const n = 8;
  const src = allAlloc(THREADS * n, { block: n }), dst = allAlloc(THREADS * THREADS * n, { block: THREADS * n });
  const line = startLine();
  idleUntil(line + delay.on(MYTHREAD === 2));
  gatherAll(dst, src, n, IN_MYSYNC | OUT_NOSYNC); // site
  siteLateness();
}
