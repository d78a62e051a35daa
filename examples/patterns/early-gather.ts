// Early gather: the root, rank 0, enters an IN_MYSYNC gather `delay` ms before the ranks it gathers
// from, and waits for the last of them.
import { IN_MYSYNC, MYTHREAD, OUT_NOSYNC, THREADS, allAlloc, gather } from 'luna-ts/spmd';
import { idleUntil, injection, siteLateness, startLine } from './inject.js';

export default function main(args: string[]): void {
  const delay = injection(args);
  const n = 8;
  const src = allAlloc(THREADS * n, { block: n }), dst = allAlloc(THREADS * THREADS * n, { block: THREADS * n });
  const line = startLine();
  idleUntil(line + delay.on(MYTHREAD !== 0));
  gather(dst, src, n, 0, IN_MYSYNC | OUT_NOSYNC); // site
  siteLateness();
}
