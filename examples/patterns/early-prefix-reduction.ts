// Early prefix reduction: rank 0, whose block total every later prefix needs, enters an IN_MYSYNC
// prefix reduction `delay` ms after the others.
import { IN_MYSYNC, MYTHREAD, OUT_NOSYNC, THREADS, allAlloc, prefixReduce } from 'luna-ts/spmd';
import { idleUntil, injection, siteLateness, startLine } from './inject.js';

export default function main(args: string[]): void {
  const delay = injection(args);
  const B = 16;
  const src = allAlloc(THREADS * B, { block: B }), dst = allAlloc(THREADS * B, { block: B });
  src.local.fill(1);
  const line = startLine();
  idleUntil(line + delay.on(MYTHREAD === 0));
  prefixReduce(dst, src, THREADS * B, 'sum', IN_MYSYNC | OUT_NOSYNC); // site
  siteLateness();
}
